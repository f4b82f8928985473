"""The onboarding message of a server that appeared after its repository (or the service) was onboarded: its
first run on its baseline SDK version is queued when it appears, and when that run is done its team gets one
message: what it is, where it was read, the baseline and the first verdict. A repository seen for the first
time has one message for all its servers instead (watcher.repos.onboarding).

The pending messages are kept in the state (`KV`, a JSON list) and read through their types: an entry that does
not fit is left out, named in the log with its field, and kept as stored (never saved over, never a crash of the
service); the others go out as ever."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any, NotRequired

import pydantic
from typing_extensions import TypedDict

from watcher.config import LoadedConfig
from watcher.core.checked import checked
from watcher.core.errors import StateError
from watcher.core.store import Store
from watcher.core.store_schema import Notice, RunRow
from watcher.notify import keys
from watcher.notify.blocks import Mrkdwn, escape, section
from watcher.repos.detect import DetectionEntry
from watcher.repos.onboarding import DOC, server_line
from watcher.repos.sync import StoredServer, stored_server
from watcher.serverset.changes import ServerChange
from watcher.serverset.record import CENTRAL, origin_name

log = logging.getLogger(__name__)

KV = "serverset:welcome"


@dataclass
class Welcome:
    name: str
    team: str
    origin: str
    where: str
    version: str
    since: str
    detection: DetectionEntry | None = None
    overridden: list[str] | None = None


class StoredWelcome(TypedDict):
    """A pending welcome as the state keeps it (`asdict(Welcome)`); a key not named here is ignored."""

    name: str
    team: str
    origin: str
    where: str
    version: str
    since: str
    detection: NotRequired[DetectionEntry | None]
    overridden: NotRequired[list[str] | None]


_STORED: pydantic.TypeAdapter[StoredWelcome] = pydantic.TypeAdapter(StoredWelcome)


@dataclass
class _Pending:
    welcomes: list[Welcome]
    unreadable: list[object]
    """The stored entries that do not fit, as stored: written back with the others, untouched."""

    def save(self, store: Store, welcomes: list[Welcome]) -> None:
        store.set_kv(KV, [*self.unreadable, *(asdict(w) for w in welcomes)])


def _pending(store: Store) -> _Pending:
    """The pending welcomes; an entry that does not fit is left out (logged with its field) and kept as stored."""
    stored = store.get_kv(KV) or []
    if not isinstance(stored, list):
        log.error(
            "state %s: the pending onboarding messages are a JSON list, not %s; none sent, the value kept "
            "(the list's first entry once the list is written again)",
            KV,
            type(stored).__name__,
        )
        return _Pending([], [stored])
    pending = _Pending([], [])
    for index, entry in enumerate(stored):
        try:
            data = checked(_STORED, entry, f"state {KV} entry {index}", StateError)
        except StateError as exc:
            log.error("a pending onboarding message cannot be read; left out, kept as stored: %s", exc)
            pending.unreadable.append(entry)
            continue
        pending.welcomes.append(
            Welcome(
                data["name"],
                data["team"],
                data["origin"],
                data["where"],
                data["version"],
                data["since"],
                data.get("detection"),
                data.get("overridden"),
            )
        )
    return pending


def expect_welcome(
    store: Store,
    change: ServerChange,
    version: str,
    detection: DetectionEntry | None = None,
    overridden: list[str] | None = None,
) -> None:
    """Remember that ``change``'s server gets its onboarding message once its run on ``version`` is done."""
    stored = _pending(store)
    pending = [w for w in stored.welcomes if w.name != change.name]
    pending.append(
        Welcome(change.name, change.team, change.origin, change.where, version, change.at, detection, overridden)
    )
    stored.save(store, pending)


def forget_welcome(store: Store, name: str) -> None:
    """A server retired before its first run was done: no onboarding message for it."""
    stored = _pending(store)
    kept = [w for w in stored.welcomes if w.name != name]
    if len(kept) != len(stored.welcomes):
        stored.save(store, kept)


def send_due_welcomes(loaded: LoadedConfig, store: Store) -> list[str]:
    """The onboarding message of each appeared server whose first run is done; returns the keys queued."""
    stored = _pending(store)
    if not stored.welcomes:
        return []
    sent, waiting = [], []
    for welcome in stored.welcomes:
        done = [
            r for r in store.runs(status="done", server=welcome.name, limit=20) if r["sdk_version"] == welcome.version
        ]
        server = next((s for s in loaded.config.servers if s.name == welcome.name), None)
        if server is None:
            continue  # retired meanwhile
        if not done:
            waiting.append(welcome)
            continue
        team = loaded.config.team(server.team)
        text, blocks = welcome_text(welcome, stored_server(server), done[0])
        key = keys.server_onboarding(welcome.name, welcome.since, team.name)
        if store.enqueue(Notice(key, team.name, team.slack_channel, "server-onboarding", text, blocks)):
            sent.append(key)
    stored.save(store, waiting)
    return sent


def welcome_text(welcome: Welcome, server: StoredServer, run: RunRow) -> tuple[Mrkdwn, list[dict[str, Any]]]:
    source = "the central config" if welcome.origin == CENTRAL else origin_name(welcome.origin)
    head = f"mcp-watcher now watches {welcome.name} too, from {source} ({welcome.where})"
    line = server_line(server, welcome.detection, welcome.overridden or [], run)
    change = (
        f"To change it, edit {'its entry' if welcome.origin == CENTRAL else 'the team file'} (every key: {DOC}); "
        "each new beta of the SDK reruns it and replies in its thread here."
    )
    text = escape("\n".join([head, line, change]))
    return text, [section(Mrkdwn("*{}*").format(head)), section(escape(line)), section(escape(change))]
