"""Readiness as the page, `/api/status` and the digest show it: per upcoming revision, per server.

Read from the state only (what the last pass stored): no network, no suite run. A revision whose window an RC
opened before the suite shipped a set for it lists every server as not yet testable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from typing_extensions import TypedDict

from watcher.config import WatcherConfig
from watcher.core.run_report import FixItem
from watcher.core.store import Store
from watcher.readiness.model import KV_RESULTS as KV_RESULTS  # where the results are kept (read here)
from watcher.readiness.model import ReadinessEntry, stored_results

STATES = ("ready", "to_fix", "not_testable")
KV_WINDOWS = "readiness:windows"
"""Revision → the spec RC tag that opened its readiness window, while it is open."""


class ServerReadinessJson(TypedDict):
    """A server's readiness in `readiness --json` and `/api/status`: its fields and its label."""

    server: str
    team: str
    status: str
    to_fix: list[FixItem]
    sdk_version: str | None
    suite_version: str | None
    reason: str
    label: str


class RevisionJson(TypedDict):
    """A revision's readiness in `readiness --json` and `/api/status`: its fields, its servers', and the count
    of ready servers out of all."""

    revision: str
    release: str
    days_left: int
    sets: list[str]
    opened_by: str | None
    servers: list[ServerReadinessJson]
    ready: int
    total: int


@dataclass(frozen=True)
class ServerReadiness:
    server: str
    team: str
    status: str
    """ready · to_fix · not_testable"""
    to_fix: list[FixItem]
    sdk_version: str | None
    suite_version: str | None
    reason: str = ""

    @property
    def label(self) -> str:
        if self.status == "ready":
            return "ready"
        if self.status == "to_fix":
            return f"{len(self.to_fix)} to fix"
        return "not yet testable"

    def to_json(self) -> ServerReadinessJson:
        return {
            "server": self.server,
            "team": self.team,
            "status": self.status,
            "to_fix": [{**item} for item in self.to_fix],
            "sdk_version": self.sdk_version,
            "suite_version": self.suite_version,
            "reason": self.reason,
            "label": self.label,
        }


@dataclass(frozen=True)
class RevisionReadiness:
    revision: str
    release: str
    days_left: int
    sets: list[str]
    opened_by: str | None
    """The spec RC tag that opened the window, when one did."""
    servers: list[ServerReadiness] = field(default_factory=list)

    @property
    def ready(self) -> int:
        return sum(s.status == "ready" for s in self.servers)

    def of_team(self, team: str) -> list[ServerReadiness]:
        return [s for s in self.servers if s.team == team]

    def to_json(self) -> RevisionJson:
        return {
            "revision": self.revision,
            "release": self.release,
            "days_left": self.days_left,
            "sets": list(self.sets),
            "opened_by": self.opened_by,
            "servers": [server.to_json() for server in self.servers],
            "ready": self.ready,
            "total": len(self.servers),
        }


class _Slot(TypedDict):
    """One revision's sets and servers, gathered from the stored results of its sets."""

    release: str
    sets: list[str]
    servers: dict[str, ReadinessEntry]


def collect_readiness(config: WatcherConfig, store: Store, today: date) -> list[RevisionReadiness]:
    results = stored_results(store)
    windows: dict[str, str] = store.get_kv(KV_WINDOWS) or {}
    by_revision: dict[str, _Slot] = {}
    for set_name, stored in sorted(results.items()):
        slot = by_revision.setdefault(stored["revision"], {"release": stored["release"], "sets": [], "servers": {}})
        slot["sets"].append(set_name)
        for name, found in stored["servers"].items():
            slot["servers"].setdefault(name, found)  # a dated set and draft for one revision: the first set wins
    for revision in windows:
        by_revision.setdefault(revision, {"release": revision, "sets": [], "servers": {}})
    out = []
    for revision, slot in sorted(by_revision.items()):
        servers = []
        for server in config.servers:
            entry = slot["servers"].get(server.name)
            if entry is None:
                why = "the suite ships no requirement set for this revision yet" if not slot["sets"] else "not run yet"
                servers.append(ServerReadiness(server.name, server.team, "not_testable", [], None, None, why))
                continue
            servers.append(
                ServerReadiness(
                    server.name,
                    server.team,
                    entry["status"],
                    list(entry.get("to_fix") or []),
                    entry.get("sdk_version"),
                    entry.get("suite_version"),
                    str(entry.get("reason") or ""),
                )
            )
        release = date.fromisoformat(slot["release"])
        out.append(
            RevisionReadiness(
                revision, slot["release"], (release - today).days, slot["sets"], windows.get(revision), servers
            )
        )
    return out


def digest_line(revision: RevisionReadiness, team: str) -> str:
    """'Ready for 2027-03-30: 12 of 40 servers; yours: 3 to fix' (the team's servers' to-fix items summed)."""
    mine = revision.of_team(team)
    head = f"Ready for {revision.revision}: {revision.ready} of {len(revision.servers)} servers"
    if not mine:
        return head
    fix = sum(len(s.to_fix) for s in mine)
    untestable = sum(s.status == "not_testable" for s in mine)
    if fix:
        yours = f"{fix} to fix"
    elif untestable == len(mine):
        yours = "not yet testable"
    else:
        yours = "ready"
    if fix and untestable:
        yours += f", {untestable} not yet testable"
    return f"{head}; yours: {yours}"
