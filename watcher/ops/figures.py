"""The status figures `mcp-watcher status`, `/api/status` and `/` all show, computed in one place.

Each source's last poll and newest versions, the spec source's last read, the run queue and the outbox:
a handful of small aggregate queries, whatever the number of servers and runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from watcher.config import WatcherConfig
from watcher.core.store import Store
from watcher.core.store_schema import PollRow, VersionRow
from watcher.core.timefmt import iso
from watcher.sources.versions import sort_key

PENDING = ("queued", "sending", "posted")
"""Outbox statuses of a notice still on its way."""


@dataclass(frozen=True)
class SourceFigures:
    name: str
    """The SDK's name, or "spec" for the spec source."""
    kind: str
    """"sdk" or "spec"."""
    registry: str
    package: str
    last_poll: str | None
    ok: bool | None
    """None: never polled."""
    error: str | None
    newest_stable: str | None
    newest_prerelease: str | None
    """The newest pre-release that is newer than the newest stable; None when there is none."""
    older_prerelease: str | None
    """The newest pre-release when it is older than the newest stable (history, not news)."""
    versions_seen: int


@dataclass(frozen=True)
class RunFigures:
    queued: int
    running: int
    done: int


@dataclass(frozen=True)
class OutboxFigures:
    pending: int
    failed: int
    console: int
    """Notices only printed to the console (``outbox --resend-console`` posts them)."""
    oldest_pending: str | None


@dataclass(frozen=True)
class StatusFigures:
    sources: list[SourceFigures]
    spec: SourceFigures
    runs: RunFigures
    outbox: OutboxFigures

    @property
    def failing(self) -> list[SourceFigures]:
        """Every source, the spec's included, whose last poll failed."""
        return [s for s in (*self.sources, self.spec) if s.ok is False]


def newest_versions(registry: str, rows: Sequence[VersionRow]) -> tuple[str | None, str | None, str | None]:
    """(newest stable, newest pre-release newer than it, newest pre-release older than it) of the live rows."""
    live = [r for r in rows if not r["yanked"]]
    stable = max((r["version"] for r in live if not r["prerelease"]), key=lambda v: sort_key(registry, v), default=None)
    pre = max((r["version"] for r in live if r["prerelease"]), key=lambda v: sort_key(registry, v), default=None)
    if pre and stable and sort_key(registry, pre) < sort_key(registry, stable):
        return stable, None, pre  # mcp 2.0.0rc1 beside 2.3.0 is history, not the newest pre-release
    return stable, pre, None


def _source(
    name: str, kind: str, registry: str, package: str, poll: PollRow | None, rows: Sequence[VersionRow]
) -> SourceFigures:
    stable, pre, older = newest_versions(registry, rows) if kind == "sdk" else (None, None, None)
    return SourceFigures(
        name=name,
        kind=kind,
        registry=registry,
        package=package,
        last_poll=poll["finished"] if poll else None,
        ok=bool(poll["ok"]) if poll else None,
        error=(poll["error"] or None) if poll and not poll["ok"] else None,
        newest_stable=stable,
        newest_prerelease=pre,
        older_prerelease=older,
        versions_seen=len(rows),
    )


def status_figures(config: WatcherConfig, store: Store) -> StatusFigures:
    """The one computation of the figures every status view shows."""
    polls = {p["source"]: p for p in store.last_polls()}
    versions: dict[str, list[VersionRow]] = {}
    for row in store.version_rows():
        versions.setdefault(row["sdk"], []).append(row)
    sources = [
        _source(sdk.name, "sdk", sdk.registry, sdk.package, polls.get(sdk.name), versions.get(sdk.name, []))
        for sdk in config.sdks
    ]
    spec = _source("spec", "spec", "spec", config.spec.registry_url, polls.get("spec"), [])
    runs = store.run_status_counts()
    box = store.outbox_counts()
    pending = sum(box.get(s, 0) for s in PENDING)
    return StatusFigures(
        sources=sources,
        spec=spec,
        runs=RunFigures(runs.get("queued", 0), runs.get("running", 0), runs.get("done", 0)),
        outbox=OutboxFigures(
            pending=pending,
            failed=box.get("failed", 0),
            console=box.get("console", 0),
            oldest_pending=iso(store.oldest_undelivered()) if pending else None,
        ),
    )
