"""The data of `/` and `/api/status`: sources, the server × SDK-version matrix, the queue, the outbox, the outlook.

Everything is read in a few whole-table queries (no query per cell), so the page stays fast with hundreds of
servers and versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

from watcher.config import Server
from watcher.store import iso, parse_iso
from watcher.store_schema import RunCell, VersionRow
from watcher.versions import sort_key
from watcher.web.context import WebContext, age

STATES = ("pass", "fail", "error", "interrupted", "running", "queued", "not-run")


@dataclass(frozen=True)
class Cell:
    version: str
    state: str
    """One of STATES."""
    run_id: int | None
    age: str
    at: str | None


@dataclass(frozen=True)
class Column:
    version: str
    roles: list[str]
    """Why the version is shown: baseline, pre-release, newest stable, tested."""
    prerelease: bool


@dataclass(frozen=True)
class ServerRow:
    server: str
    team: str
    cells: list[Cell]


@dataclass(frozen=True)
class TeamRows:
    team: str
    servers: list[ServerRow]


@dataclass(frozen=True)
class SdkMatrix:
    sdk: str
    registry: str
    package: str
    columns: list[Column]
    teams: list[TeamRows]


@dataclass(frozen=True)
class SourceStatus:
    sdk: str
    registry: str
    package: str
    last_poll: str | None
    age: str
    ok: bool | None
    error: str | None
    newest_stable: str | None
    newest_prerelease: str | None
    versions_seen: int


@dataclass(frozen=True)
class RunRef:
    run_id: int
    server: str
    sdk_version: str
    state: str
    age: str


@dataclass(frozen=True)
class FailedNotice:
    key: str
    error: str


@dataclass(frozen=True)
class OutboxStatus:
    pending: int
    failed: int
    oldest_pending_age: str
    failed_notices: list[FailedNotice]


@dataclass(frozen=True)
class Outlook:
    today: str
    next_revision: str | None
    next_revision_note: str
    next_revision_days: int | None
    next_removal: str | None
    next_removal_days: int | None
    next_removal_features: list[str]
    problems: list[str]


@dataclass(frozen=True)
class Overview:
    generated: str
    sources: list[SourceStatus]
    matrices: list[SdkMatrix]
    queued: list[RunRef]
    running: list[RunRef]
    outbox: OutboxStatus
    outlook: Outlook


def cell_state(run: RunCell) -> str:
    if run["status"] == "done":
        return str(run["verdict"] or "error")
    if run["status"] == "running":
        return "running"
    return "interrupted" if run["verdict"] == "interrupted" else "queued"


def _moment(run: RunCell, state: str) -> datetime | None:
    fields: dict[str, Literal["started", "queued", "finished"]] = {"running": "started", "queued": "queued"}
    field = fields.get(state, "finished")
    return parse_iso(run[field]) or parse_iso(run["queued"])


def _newest(registry: str, versions: Sequence[str]) -> str | None:
    return max(versions, key=lambda v: sort_key(registry, v)) if versions else None


def columns_of(
    registry: str, servers: Sequence[Server], versions: Sequence[VersionRow], tested: set[str]
) -> list[Column]:
    """The versions that matter for one SDK: the servers' baselines, every pre-release seen after the first
    poll, the newest stable, and any version a server was run against."""
    live = [v for v in versions if not v["yanked"]]
    roles: dict[str, list[str]] = {}
    prerelease = {v["version"]: bool(v["prerelease"]) for v in versions}
    for server in servers:
        roles.setdefault(server.baseline_sdk_version, []).append("baseline")
    for row in live:
        if row["prerelease"] and not row["baseline"]:
            roles.setdefault(row["version"], []).append("pre-release")
    stable = _newest(registry, [v["version"] for v in live if not v["prerelease"]])
    if stable:
        roles.setdefault(stable, []).append("newest stable")
    for version in tested:
        roles.setdefault(version, []).append("tested")
    ordered = sorted(roles, key=lambda v: sort_key(registry, v))
    return [Column(v, sorted(set(roles[v]), key=roles[v].index), prerelease.get(v, False)) for v in ordered]


def collect_overview(ctx: WebContext) -> Overview:
    config = ctx.loaded.config
    now = ctx.now()
    runs = ctx.store.run_cells()
    latest: dict[tuple[str, str], RunCell] = {}
    for cell_run in runs:  # ordered by id: the newest run of a pair wins
        latest[(cell_run["server"], cell_run["sdk_version"])] = cell_run
    versions_by_sdk: dict[str, list[VersionRow]] = {}
    for row in ctx.store.version_rows():
        versions_by_sdk.setdefault(row["sdk"], []).append(row)

    matrices = []
    for sdk in config.sdks:
        servers = [s for s in config.servers if s.sdk == sdk.name]
        if not servers:
            continue
        names = {s.name for s in servers}
        tested = {version for (server, version) in latest if server in names}
        columns = columns_of(sdk.registry, servers, versions_by_sdk.get(sdk.name, []), tested)
        teams: dict[str, list[ServerRow]] = {}
        for server in servers:
            cells = []
            for column in columns:
                run = latest.get((server.name, column.version))
                if run is None:
                    cells.append(Cell(column.version, "not-run", None, "", None))
                    continue
                state = cell_state(run)
                moment = _moment(run, state)
                cells.append(Cell(column.version, state, run["id"], age(moment, now), iso(moment)))
            teams.setdefault(server.team, []).append(ServerRow(server.name, server.team, cells))
        matrices.append(
            SdkMatrix(sdk.name, sdk.registry, sdk.package, columns, [TeamRows(t, rows) for t, rows in teams.items()])
        )

    return Overview(
        generated=iso(now) or "",
        sources=_sources(ctx, versions_by_sdk, now),
        matrices=matrices,
        queued=_refs(ctx, runs, "queued", now),
        running=_refs(ctx, runs, "running", now),
        outbox=_outbox(ctx, now),
        outlook=collect_outlook(ctx, now.date()),
    )


def _sources(ctx: WebContext, versions_by_sdk: dict[str, list[VersionRow]], now: datetime) -> list[SourceStatus]:
    polls = {p["source"]: p for p in ctx.store.last_polls()}
    sources = []
    for sdk in ctx.loaded.config.sdks:
        poll = polls.get(sdk.name)
        live = [v for v in versions_by_sdk.get(sdk.name, []) if not v["yanked"]]
        sources.append(
            SourceStatus(
                sdk=sdk.name,
                registry=sdk.registry,
                package=sdk.package,
                last_poll=poll["finished"] if poll else None,
                age=age(parse_iso(poll["finished"]), now) if poll else "",
                ok=bool(poll["ok"]) if poll else None,
                error=ctx.clean(poll["error"]) if poll and poll["error"] else None,
                newest_stable=_newest(sdk.registry, [v["version"] for v in live if not v["prerelease"]]),
                newest_prerelease=_newest(sdk.registry, [v["version"] for v in live if v["prerelease"]]),
                versions_seen=len(versions_by_sdk.get(sdk.name, [])),
            )
        )
    return sources


def _refs(ctx: WebContext, runs: Sequence[RunCell], status: str, now: datetime) -> list[RunRef]:
    refs = []
    for run in runs:
        if run["status"] != status:
            continue
        state = cell_state(run)
        refs.append(RunRef(run["id"], run["server"], run["sdk_version"], state, age(_moment(run, state), now)))
    return refs


def _outbox(ctx: WebContext, now: datetime) -> OutboxStatus:
    counts = ctx.store.outbox_counts()
    pending = sum(counts.get(s, 0) for s in ("queued", "sending", "posted"))
    oldest = ctx.store.oldest_undelivered() if pending else None
    failed = ctx.store.outbox(statuses=("failed",), limit=50)
    return OutboxStatus(
        pending=pending,
        failed=counts.get("failed", 0),
        oldest_pending_age=age(oldest, now),
        failed_notices=[FailedNotice(r["key"], ctx.clean(r["last_error"] or "")) for r in failed],
    )


def collect_outlook(ctx: WebContext, today: date) -> Outlook:
    """The next spec revision and the next earliest removal, from the spec state (never the network)."""
    from watcher.digest.sections.changes import load_spec_view
    from watcher.spec.calendar import next_release

    try:
        spec = load_spec_view(ctx.loaded.config, ctx.store, today)
    except Exception as exc:  # an unreadable spec state is shown, not a broken page
        return Outlook(today.isoformat(), None, "", None, None, None, [], [ctx.clean(f"spec state unreadable: {exc}")])
    slot = next_release(spec.calendar, spec.revisions, today - timedelta(days=1), today)
    upcoming = [
        r for r in spec.rows if r["state"] == "deprecated" and (r.get("earliest_removal") or "") >= today.isoformat()
    ]
    first = min((r["earliest_removal"] for r in upcoming), default=None)
    return Outlook(
        today=today.isoformat(),
        next_revision=slot.date.isoformat() if slot else None,
        next_revision_note=slot.note if slot else "no release projected by the calendar",
        next_revision_days=(slot.date - today).days if slot else None,
        next_removal=first,
        next_removal_days=(date.fromisoformat(first) - today).days if first else None,
        next_removal_features=[r["feature"] for r in upcoming if r["earliest_removal"] == first],
        problems=[ctx.clean(p) for p in spec.problems],
    )
