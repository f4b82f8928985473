"""Every change of the server set is an event: the set in force now compared with the record of the last one.

A server that appears (new, or back after it was retired), one that disappears (retired: its runs are kept, it
leaves the matrix, its name stays reserved) and one whose definition changed (rebuilt) are each recorded once
as an event (`server-appeared`, `server-retired`, `server-redefined`), logged once and listed on the page. The
service's first look at the set records it without events: those servers are where it starts from, as the
first poll of a registry is its baseline.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from typing_extensions import TypedDict

from watcher.core.store import Store
from watcher.core.timefmt import iso, utcnow
from watcher.serverset.record import ServerEntry, ServerRecord, definition, fingerprint, origin_name
from watcher.suites.settings import Server

log = logging.getLogger(__name__)

ChangeKind = Literal["appeared", "retired", "redefined"]
EVENT_KINDS: tuple[str, ...] = ("server-appeared", "server-retired", "server-redefined")


@dataclass(frozen=True)
class Placed:
    """A server in force and where it comes from."""

    server: Server
    origin: str
    """CENTRAL or the repository's git address."""
    where: str


@dataclass(frozen=True)
class ServerChange:
    kind: ChangeKind
    name: str
    team: str
    origin: str
    where: str
    at: str
    changed: tuple[str, ...] = ()
    """The keys of the definition that differ (redefined only)."""

    def line(self) -> str:
        """The change in one line, for the log and the page."""
        source = origin_name(self.origin)
        if self.kind == "appeared":
            return f"server {self.name} (team {self.team}) appeared, from {source} ({self.where})"
        if self.kind == "retired":
            return (
                f"server {self.name} (team {self.team}) retired: no longer in {source}; its runs are kept, "
                "it is off the matrix and its name stays reserved"
            )
        return f"server {self.name} (team {self.team}) redefined in {source}: {', '.join(self.changed)} changed"

    def event_key(self) -> str:
        return f"server-{self.kind}:{self.name}:{self.at}"


def record_changes(store: Store, placed: list[Placed]) -> list[ServerChange]:
    """Compare the servers in force with the record, record what changed (once, as events, logged), and return
    the changes. The first call on a state only records the set (no changes)."""
    record = ServerRecord.load(store)
    now = iso(utcnow())
    first = not record.taken
    changes: list[ServerChange] = []
    current = {p.server.name: p for p in placed}
    for name, each in current.items():
        data = definition(each.server)
        entry = record.entries.get(name)
        if entry is None or entry.retired or entry.origin != each.origin:
            if not first:
                changes.append(ServerChange("appeared", name, each.server.team, each.origin, each.where, now))
            record.entries[name] = ServerEntry(name, each.server.team, each.origin, each.where, data, now)
            continue
        if fingerprint(entry.definition) != fingerprint(data):
            changed = tuple(sorted(k for k in {*entry.definition, *data} if entry.definition.get(k) != data.get(k)))
            changes.append(ServerChange("redefined", name, each.server.team, each.origin, each.where, now, changed))
        entry.definition, entry.where, entry.team = data, each.where, each.server.team
    for name, entry in record.entries.items():
        if entry.retired is None and name not in current:
            entry.retired = now
            changes.append(ServerChange("retired", name, entry.team, entry.origin, entry.where, now))
    record.save(store)
    if first:
        log.info("server set recorded: %d server(s); changes from now on are events", len(current))
    for change in changes:
        payload = {
            "name": change.name,
            "team": change.team,
            "origin": change.origin,
            "where": change.where,
            "changed": list(change.changed),
            "line": change.line(),
        }
        if store.add_event(change.event_key(), f"server-{change.kind}", payload):
            (log.warning if change.kind == "retired" else log.info)("%s", change.line(), extra={"server": change.name})
    return changes


class ChangeRow(TypedDict):
    """A change of the server set as the page and `/api/status` list it: its kind and time, then its event's
    payload as `record_changes` wrote it."""

    kind: str
    at: str
    name: str
    team: str
    origin: str
    where: str
    changed: list[str]
    line: str


def recent_changes(store: Store, limit: int = 20) -> list[ChangeRow]:
    """The newest changes of the server set, newest first, as the page and `/api/status` list them."""
    listed: list[ChangeRow] = []
    for r in store.newest_events(EVENT_KINDS, int(limit)):
        p = r["payload"]  # the event's JSON as record_changes wrote it (these keys since server-set events began)
        listed.append(
            {
                "kind": r["kind"].removeprefix("server-"),
                "at": r["created"],
                "name": p["name"],
                "team": p["team"],
                "origin": p["origin"],
                "where": p["where"],
                "changed": p["changed"],
                "line": p["line"],
            }
        )
    return listed
