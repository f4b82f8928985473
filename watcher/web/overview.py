"""The data of `/` and `/api/status`: the server × SDK-version matrix first, then the outlook, the queue, the
outbox, and the sources in one line of counts.

The matrix is one query (the latest run of each server and version, of any trigger, which an index answers);
the figures shared with `mcp-watcher status` come from `watcher.ops.figures`. Above `FOLD_AT` servers the matrix
folds to one line per team (counted in SQL), each linking to that team's own matrix (`/?team=NAME`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from watcher.clusters.view import ClusterView, collect_clusters
from watcher.core.store_schema import RunCell, VersionRow
from watcher.core.timefmt import iso, parse_iso
from watcher.ops.figures import SourceFigures, StatusFigures, status_figures
from watcher.ops.status import SourceJson, source_json
from watcher.sources.versions import sort_key
from watcher.suites.settings import Server
from watcher.web.context import WebContext, age
from watcher.web.server_set import ServerSetView, collect_server_set

if TYPE_CHECKING:
    from watcher.readiness.view import RevisionJson

STATES = ("pass", "fail", "error", "interrupted", "running", "queued", "not-run")
FOLD_AT = 150
"""More servers than this in one view: one summary line per team instead of every row."""
LIST_LIMIT = 20
"""Runs listed per kind (queued, running, recent) on the page; the counts are always whole."""


@dataclass(slots=True)
class Cell:
    version: str
    state: str
    """One of STATES."""
    run_id: int | None
    age: str
    at: str | None
    trigger: str = ""
    """What queued the run, in a word (`trigger_label`)."""


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
class TeamSummary:
    """A folded team: how many of its cells are in each state (every SDK's matrix together)."""

    team: str
    servers: int
    counts: dict[str, int]


@dataclass(frozen=True)
class Selection:
    team: str | None
    query: str
    shown: int
    """Servers in this view."""
    total: int
    folded: bool
    teams: list[str]
    """Every team with servers (the filter's choices)."""
    team_known: bool = True
    """False when ``team`` names no configured team (the page says so instead of counting none)."""


@dataclass(frozen=True)
class SourceStatus:
    """A source as the page shows it: its figures (the one `SourceFigures`, which `status` shows too), how long
    ago it was last polled, and its error cleaned for the page."""

    figures: SourceFigures
    age: str
    error: str | None

    @property
    def sdk(self) -> str:
        return self.figures.name

    def __getattr__(self, name: str) -> Any:  # the template reads the figures' fields from the status
        if name.startswith("__") or name == "figures":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.figures, name)

    def as_json(self) -> SourceStatusJson:
        """As `/api/status` shows it: `status --json`'s figures of the source, its age after `last_poll`."""
        figures = source_json(self.figures)
        return {
            "sdk": figures["sdk"],
            "registry": figures["registry"],
            "package": figures["package"],
            "last_poll": figures["last_poll"],
            "age": self.age,
            "ok": figures["ok"],
            "error": self.error,
            "newest_stable": figures["newest_stable"],
            "newest_prerelease": figures["newest_prerelease"],
            "older_prerelease": figures["older_prerelease"],
            "versions_seen": figures["versions_seen"],
        }


class SourceStatusJson(SourceJson):
    """A source in `/api/status`: its figures as `status --json` shows them, its age, and its error as the page
    shows it (cleaned)."""

    age: str


@dataclass(frozen=True)
class FailGroup:
    """Sources that failed with the same error, named together."""

    error: str
    sources: list[str]


@dataclass(frozen=True)
class SourcesLine:
    total: int
    ok: int
    failing: int
    never: int
    groups: list[FailGroup]


@dataclass(frozen=True)
class RunRef:
    run_id: int
    server: str
    sdk_version: str
    state: str
    age: str
    trigger: str = ""


@dataclass(frozen=True)
class RunCounts:
    queued: int
    running: int


@dataclass(frozen=True)
class FailedNotice:
    key: str
    error: str


@dataclass(frozen=True)
class OutboxStatus:
    pending: int
    failed: int
    console: int
    oldest_pending_age: str
    failed_notices: list[FailedNotice]


@dataclass(frozen=True)
class Outlook:
    today: str
    registry_known: bool
    """False: the spec registry was never read, so "no removal" would be a false all-clear."""
    next_revision: str | None
    next_revision_note: str
    next_revision_days: int | None
    next_removal: str | None
    next_removal_days: int | None
    next_removal_features: list[str]
    state_error: str | None = None
    """The spec state could not be read at all (the banner says so)."""


@dataclass(frozen=True)
class Overview:
    generated: str
    selection: Selection
    banners: list[str]
    """One line per real condition, worded for this page."""
    matrices: list[SdkMatrix]
    team_summaries: list[TeamSummary]
    """Filled instead of the matrices' rows when the view is folded."""
    sources: list[SourceStatus]
    spec_source: SourceStatus
    sources_line: SourcesLine
    runs: RunCounts
    queued: list[RunRef]
    running: list[RunRef]
    recent: list[RunRef]
    """The latest finished runs, of any trigger."""
    outbox: OutboxStatus
    outlook: Outlook
    readiness: list[RevisionJson] = field(default_factory=list)
    """Per upcoming revision, per server (watcher.readiness.view); `/` shows one line, /readiness the rest."""
    server_set: ServerSetView = field(default_factory=ServerSetView)
    """Its latest changes, the retired servers, repositories without a team file or an owner."""
    clusters: list[ClusterView] = field(default_factory=list)
    """The failure clusters (watcher.clusters.view): `/` lists the likely-SDK ones, /clusters all of them."""


def trigger_label(trigger: str | None) -> str:
    """A run's trigger in a word: release, baseline, manual, cli (a `check`), … (the run page has it whole)."""
    return (trigger or "").split(":", 1)[0] or "unknown"


def cell_state(run: RunCell) -> str:
    if run["status"] == "done":
        return str(run["verdict"] or "error")
    if run["status"] == "running":
        return "running"
    return "interrupted" if run["verdict"] == "interrupted" else "queued"


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


def select_servers(servers: Sequence[Server], team: str | None, query: str) -> list[Server]:
    """The servers of one team (None: every team) whose name contains ``query`` (case-insensitive)."""
    needle = query.strip().lower()
    return [s for s in servers if (team is None or s.team == team) and needle in s.name.lower()]


class _Ages:
    """Ages of stored moments, each distinct text parsed once (a matrix repeats a few moments many times)."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.seen: dict[str | None, tuple[str, str | None]] = {}

    def of(self, text: str | None) -> tuple[str, str | None]:
        found = self.seen.get(text)
        if found is None:
            moment = parse_iso(text)
            found = self.seen[text] = (age(moment, self.now), iso(moment))
        return found

    def of_run(self, run: RunCell, state: str) -> tuple[str, str | None]:
        text = run["started"] if state == "running" else run["queued"] if state == "queued" else run["finished"]
        return self.of(text or run["queued"])


def collect_overview(ctx: WebContext, team: str | None = None, query: str = "", fold: bool = True) -> Overview:
    """Everything `/` shows for one selection of servers; ``fold`` False: never fold (`/api/status`)."""
    config = ctx.loaded.config
    now = ctx.now()
    figures = status_figures(config, ctx.store)
    chosen = select_servers(config.servers, team, query)
    folded = fold and team is None and len(chosen) > FOLD_AT  # a team asked for by name is shown whole
    versions_by_sdk: dict[str, list[VersionRow]] = {}
    for row in ctx.store.version_rows():
        versions_by_sdk.setdefault(row["sdk"], []).append(row)
    tested = ctx.store.tested_versions()
    ages = _Ages(now)

    latest: dict[str, dict[str, Cell]] = {}  # server → version → its cell, every distinct text computed once
    if not folded:
        whole = team is None and not query.strip()
        labels = functools.lru_cache(maxsize=None)(trigger_label)
        for server_name, version, run_id, trigger, state, moment in ctx.store.latest_cells(
            None if whole else [s.name for s in chosen]
        ):
            shown, at = ages.of(moment)
            latest.setdefault(server_name, {})[version] = Cell(version, state, run_id, shown, at, labels(trigger))

    matrices = []
    width: dict[str, int] = {}
    for sdk in config.sdks:
        servers = [s for s in chosen if s.sdk == sdk.name]
        if not servers:
            continue
        columns = columns_of(sdk.registry, servers, versions_by_sdk.get(sdk.name, []), tested.get(sdk.name, set()))
        width[sdk.name] = len(columns)
        teams: dict[str, list[ServerRow]] = {}
        if not folded:
            empty = [(c.version, Cell(c.version, "not-run", None, "", None)) for c in columns]
            for server in servers:
                runs = latest.get(server.name, {})
                cells = [runs.get(version) or blank for version, blank in empty]
                teams.setdefault(server.team, []).append(ServerRow(server.name, server.team, cells))
        matrices.append(
            SdkMatrix(sdk.name, sdk.registry, sdk.package, columns, [TeamRows(t, rows) for t, rows in teams.items()])
        )

    selection = Selection(
        team=team,
        query=query,
        shown=len(chosen),
        total=len(config.servers),
        folded=folded,
        teams=sorted({s.team for s in config.servers}),
        team_known=team is None or any(t.name == team for t in config.teams),
    )
    outlook = collect_outlook(ctx, now.date())
    return Overview(
        generated=iso(now) or "",
        selection=selection,
        banners=banners(ctx, figures, outlook, now),
        matrices=matrices,
        team_summaries=_team_summaries(ctx, chosen, width) if folded else [],
        sources=[_source_status(ctx, s, now) for s in figures.sources],
        spec_source=_source_status(ctx, figures.spec, now),
        sources_line=_sources_line(ctx, figures),
        runs=RunCounts(figures.runs.queued, figures.runs.running),
        queued=_refs(ctx.store.run_refs(("queued",), LIST_LIMIT), ages),
        running=_refs(ctx.store.run_refs(("running",), LIST_LIMIT), ages),
        recent=_refs(ctx.store.run_refs(("done",), LIST_LIMIT // 2, newest_first=True), ages),
        outbox=_outbox(ctx, figures, now),
        outlook=outlook,
        readiness=readiness_json(ctx, now.date()),
        server_set=collect_server_set(ctx),
        clusters=collect_clusters(config, ctx.store, team=team),
    )


def _team_summaries(ctx: WebContext, chosen: Sequence[Server], width: dict[str, int]) -> list[TeamSummary]:
    by_server = {s.name: s for s in chosen}
    counts: dict[str, dict[str, int]] = {}
    sizes: dict[str, int] = {}
    for each in chosen:
        sizes[each.team] = sizes.get(each.team, 0) + 1
        team = counts.setdefault(each.team, {})
        team["not-run"] = team.get("not-run", 0) + width.get(each.sdk, 0)
    for tally in ctx.store.latest_run_tally():  # grouped in SQL: a few rows per server, not one per cell
        server = by_server.get(tally["server"])
        if server is None or tally["sdk"] != server.sdk:
            continue
        state = tally["state"]
        team = counts[server.team]
        team[state] = team.get(state, 0) + tally["n"]
        team["not-run"] -= tally["n"]
    return [
        TeamSummary(name, sizes[name], {s: counts[name][s] for s in STATES if counts[name].get(s)})
        for name in sorted(sizes)
    ]


def _source_status(ctx: WebContext, source: SourceFigures, now: datetime) -> SourceStatus:
    return SourceStatus(
        source, age(parse_iso(source.last_poll), now), ctx.clean(source.error) if source.error else None
    )


URL_PATH = re.compile(r"(https?://[^/\s]+)/\S*?(?=[:;,]?(?:\s|$))")


def error_kind(error: str) -> str:
    """An error with each URL cut to its host: ten sources failing on one registry's DNS read as one line."""
    return URL_PATH.sub(r"\1/…", error)


def _sources_line(ctx: WebContext, figures: StatusFigures) -> SourcesLine:
    every = [*figures.sources, figures.spec]
    groups: dict[str, list[str]] = {}
    for source in figures.failing:
        groups.setdefault(error_kind(ctx.clean(source.error or "no reason recorded")), []).append(source.name)
    return SourcesLine(
        total=len(every),
        ok=sum(1 for s in every if s.ok),
        failing=len(figures.failing),
        never=sum(1 for s in every if s.ok is None),
        groups=[FailGroup(error, names) for error, names in groups.items()],
    )


def spec_banners(ctx: WebContext, spec: SourceFigures, now: datetime, unknown: str, dates: str) -> list[str]:
    """The spec source's condition in one line, if it has one, saying what it makes ``unknown`` on the page (no
    copy read yet) or where its ``dates`` come from (an earlier copy)."""
    from watcher.spec.watch import KV_LAST_GOOD

    last_good = ctx.store.get_kv(KV_LAST_GOOD)
    error = ctx.clean(spec.error or "no reason recorded")
    if last_good is None:
        if spec.ok is False:
            return [f"The spec source could not be read ({error}) and no earlier copy exists: {unknown}."]
        return [f"The spec source has not been read yet: {unknown}."]
    if spec.ok is False:
        saved = last_good.get("saved") or "earlier"
        ago = age(parse_iso(spec.last_poll), now)
        return [
            f"The spec source failed at its last read, {ago} ago ({error}): {dates} come from the copy read {saved}."
        ]
    return []


def banners(ctx: WebContext, figures: StatusFigures, outlook: Outlook, now: datetime) -> list[str]:
    """One line per condition that makes something on `/` unknown or stale, saying what it affects here."""
    lines = []
    if outlook.state_error is not None:
        lines.append(
            f"The spec state in the database could not be read ({outlook.state_error}): the next revision and the "
            "next earliest removal are unknown."
        )
    else:
        lines += spec_banners(
            ctx, figures.spec, now, unknown="the next earliest removal is unknown", dates="the removal dates"
        )
    sdks = figures.sources
    failing = [s for s in sdks if s.ok is False]
    if sdks and all(s.ok is None for s in sdks):
        lines.append("No SDK source has been polled yet: the matrix has no pre-release columns until the first poll.")
    elif failing:
        lines.append(
            f"{len(failing)} of {len(sdks)} SDK sources failed at their last poll: a new version there goes unseen "
            "until they are read again (see Sources)."
        )
    if figures.outbox.failed:
        lines.append(f"{figures.outbox.failed} notice(s) could not be delivered and are not retried (see Outbox).")
    if ctx.loaded.config.repos or ctx.loaded.config.discover.github:
        from watcher.repos.show import page_banners

        lines += [ctx.clean(line) for line in page_banners(ctx.loaded.config, ctx.store)]
    return lines


def _refs(runs: Sequence[RunCell], ages: _Ages) -> list[RunRef]:
    refs = []
    for run in runs:
        state = cell_state(run)
        refs.append(
            RunRef(
                run["id"],
                run["server"],
                run["sdk_version"],
                state,
                ages.of_run(run, state)[0],
                trigger_label(run["trigger"]),
            )
        )
    return refs


def _outbox(ctx: WebContext, figures: StatusFigures, now: datetime) -> OutboxStatus:
    failed = ctx.store.outbox(statuses=("failed",), limit=LIST_LIMIT) if figures.outbox.failed else []
    return OutboxStatus(
        pending=figures.outbox.pending,
        failed=figures.outbox.failed,
        console=figures.outbox.console,
        oldest_pending_age=age(parse_iso(figures.outbox.oldest_pending), now),
        failed_notices=[FailedNotice(r["key"], ctx.clean(r["last_error"] or "")) for r in failed],
    )


def collect_outlook(ctx: WebContext, today: date) -> Outlook:
    """The next spec revision and the next earliest removal, from the spec state (never the network)."""
    from watcher.spec.calendar import next_release
    from watcher.spec.view import load_spec_view
    from watcher.spec.watch import KV_LAST_GOOD

    known = ctx.store.get_kv(KV_LAST_GOOD) is not None
    try:
        spec = load_spec_view(ctx.loaded.config, ctx.store, today)
    except Exception:  # an unreadable spec state is shown as unknown (the banner says so), not a broken page
        return Outlook(
            today.isoformat(), False, None, "unknown: the spec state could not be read", None, None, None, []
        )
    slot = next_release(spec.calendar, spec.revisions, today - timedelta(days=1), today)
    upcoming = [
        r for r in spec.rows if r["state"] == "deprecated" and (r.get("earliest_removal") or "") >= today.isoformat()
    ]
    first = min((r["earliest_removal"] or "" for r in upcoming), default=None)  # upcoming ones have a date
    return Outlook(
        today=today.isoformat(),
        registry_known=known,
        next_revision=slot.date.isoformat() if slot else None,
        next_revision_note=slot.note if slot else "no release projected by the calendar",
        next_revision_days=(slot.date - today).days if slot else None,
        next_removal=first,
        next_removal_days=(date.fromisoformat(first) - today).days if first else None,
        next_removal_features=[r["feature"] for r in upcoming if r["earliest_removal"] == first],
    )


def readiness_json(ctx: WebContext, today: date) -> list[RevisionJson]:
    from watcher.readiness.view import collect_readiness

    return [r.to_json() for r in collect_readiness(ctx.loaded.config, ctx.store, today)]
