"""The onboarding message of a server that appeared after its repository (or the service) was onboarded: its
first run on its baseline SDK version is queued when it appears, and when that run is done its team gets one
message: what it is, where it was read, the baseline and the first verdict. A repository seen for the first
time has one message for all its servers instead (watcher.repos.onboarding)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from watcher.config import LoadedConfig
from watcher.core.store import Store
from watcher.core.store_schema import Notice, RunRow
from watcher.notify import keys
from watcher.notify.blocks import Mrkdwn, escape, section
from watcher.repos.detect import DetectionEntry
from watcher.repos.onboarding import DOC, server_line
from watcher.repos.sync import StoredServer, stored_server
from watcher.serverset.changes import ServerChange
from watcher.serverset.record import CENTRAL, origin_name

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


def _pending(store: Store) -> list[Welcome]:
    known = Welcome.__dataclass_fields__
    return [Welcome(**{k: v for k, v in w.items() if k in known}) for w in store.get_kv(KV) or []]


def expect_welcome(
    store: Store,
    change: ServerChange,
    version: str,
    detection: DetectionEntry | None = None,
    overridden: list[str] | None = None,
) -> None:
    """Remember that ``change``'s server gets its onboarding message once its run on ``version`` is done."""
    pending = [w for w in _pending(store) if w.name != change.name]
    pending.append(
        Welcome(change.name, change.team, change.origin, change.where, version, change.at, detection, overridden)
    )
    store.set_kv(KV, [asdict(w) for w in pending])


def forget_welcome(store: Store, name: str) -> None:
    """A server retired before its first run was done: no onboarding message for it."""
    pending = _pending(store)
    kept = [w for w in pending if w.name != name]
    if len(kept) != len(pending):
        store.set_kv(KV, [asdict(w) for w in kept])


def send_due_welcomes(loaded: LoadedConfig, store: Store) -> list[str]:
    """The onboarding message of each appeared server whose first run is done; returns the keys queued."""
    pending = _pending(store)
    if not pending:
        return []
    sent, waiting = [], []
    for welcome in pending:
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
    store.set_kv(KV, [asdict(w) for w in waiting])
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
