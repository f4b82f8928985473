"""The weekly deprecation digest of one team, assembled as plain data (rendering lives in digest_render).

Four parts, from the state only (no network):

1. what is on its way out: every registry row with its computed earliest removal, and what changed since
   the team's last digest (the spec watcher's change events) at the top;
2. where the team is affected: per server, each deprecated feature with the evidence that it is in use —
   a capability its snapshot declares, an SDK deprecation warning of its latest suite run, an HTTP+SSE
   endpoint, a passing conformance scenario that exercises the feature — or "nothing found";
3. the team's SDK releases of the period with each server's suite verdict (or "pending");
4. what is coming: the next spec revision, the SDK-beta window before it, the next earliest removal.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from watcher.config import LoadedConfig, Server, Team, WatcherConfig
from watcher.notify.render import release_page
from watcher.source_alerts import unchecked_sources
from watcher.spec.calendar import ReleaseCalendar, beta_window, next_release, projected_releases
from watcher.spec.registry import feature_key
from watcher.spec.revisions import SpecRevision
from watcher.store import Store, parse_iso

DIGEST_KIND = "digest"
PERIOD = timedelta(days=7)
SPEC_CHANGE_PREFIX = "spec-"
SPEC_CHANGE_KINDS = (
    "new-deprecation",
    "moved-to-removed",
    "earliest-removal-changed",
    "deprecation-gone",
    "new-rc",
    "new-revision",
)

# --- plain data ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Feature:
    """One registry row as the digest shows it."""

    feature: str
    key: str
    state: str
    deprecated_in: str
    sep: str
    migration: str
    earliest_removal_text: str
    window_starts: str | None
    window_ends: str | None
    earliest_removal: str | None
    projected: bool
    days_left: int | None
    basis: str
    resolved: bool
    flags: list[str] = field(default_factory=list)
    affected_servers: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ChangeItem:
    """A spec change recorded by the spec watcher since the last digest."""

    kind: str
    subject: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    recorded: str


@dataclass(frozen=True)
class Evidence:
    kind: str
    """capability | sdk-warning | transport | conformance"""
    detail: str
    source: str


@dataclass(frozen=True)
class Exposure:
    feature: str
    key: str
    earliest_removal: str | None
    days_left: int | None
    evidence: list[Evidence]


@dataclass(frozen=True)
class ServerFindings:
    server: str
    sdk: str
    exposures: list[Exposure]
    checked: list[str]
    """What was looked at (so "nothing found" says where nobody found anything)."""
    gaps: list[str]
    """What could not be looked at (no snapshot configured, no suite run yet…)."""


@dataclass(frozen=True)
class ThreadRef:
    key: str
    status: str
    channel: str | None = None
    ts: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class Verdict:
    server: str
    verdict: str
    """pass | fail | error (from the suite run) | pending | not-run"""
    detail: str
    run_id: int | None = None
    thread: ThreadRef | None = None


@dataclass(frozen=True)
class ReleaseItem:
    sdk: str
    registry: str
    package: str
    version: str
    prerelease: bool
    first_seen: str | None
    published: str | None
    page: str | None
    verdicts: list[Verdict]
    thread: ThreadRef | None


@dataclass(frozen=True)
class Outlook:
    next_revision: str | None
    next_revision_note: str
    next_revision_actual: bool
    next_revision_name: str | None
    beta_window_start: str | None
    beta_window_end: str | None
    beta_window_open: bool
    next_removal: str | None
    next_removal_days: int | None
    next_removal_features: list[str]


@dataclass(frozen=True)
class Digest:
    team: str
    channel: str
    today: str
    week: str
    """ISO week of ``today``, e.g. "2026-W49"."""
    since: str
    until: str
    changes: list[ChangeItem]
    features: list[Feature]
    servers: list[ServerFindings]
    team_sdks: list[str]
    releases: list[ReleaseItem]
    outlook: Outlook
    revision_dates: list[str]
    """Release dates (actual and projected) over the timeline's span, for the picture."""
    released_dates: list[str]
    """Those of them that are actual releases."""
    problems: list[str]
    """What the reader must know about the data itself (registry unreadable, rows unresolved…)."""

    @property
    def deprecated(self) -> list[Feature]:
        return [f for f in self.features if f.state == "deprecated"]

    @property
    def removed(self) -> list[Feature]:
        return [f for f in self.features if f.state != "deprecated"]

    @property
    def affected_keys(self) -> set[str]:
        return {f.key for f in self.features if f.affected_servers}

    def to_json(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self), default=str))


def iso_week(day: date) -> str:
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


# --- the spec side, read from the state the spec watcher keeps ------------------------------------------


@dataclass(frozen=True)
class SpecView:
    rows: list[dict[str, Any]]
    """``compute_deprecations`` objects."""
    revisions: list[SpecRevision]
    calendar: ReleaseCalendar
    problems: list[str] = field(default_factory=list)


def load_spec_view(config: WatcherConfig, store: Store, today: date) -> SpecView:
    """The last good registry and releases from the state (never the network), computed for ``today``."""
    from watcher.spec.watch import KV_ALERTS, compute, fetch_spec

    fetch = asyncio.run(fetch_spec(config, store, None))
    rows = compute(config, fetch, today)
    problems: list[str] = []
    if fetch.registry is None:
        problems.append(
            "The spec's deprecated-features registry has not been read yet: the list below is empty because "
            "nothing is known, not because nothing is deprecated."
        )
    alerts = store.get_kv(KV_ALERTS) or {}
    for source in ("registry", "releases"):
        error = (alerts.get(source) or {}).get("error")
        if error:
            saved = f" (saved {fetch.registry_saved_at})" if source == "registry" and fetch.registry_saved_at else ""
            problems.append(
                f"The spec {source} cannot be read at the moment: {error}. The last good copy{saved} stays in use."
            )
    problems.extend(fetch.sep_errors.values())
    return SpecView(rows, list(fetch.revisions), ReleaseCalendar.from_settings(config.spec.calendar), problems)


# --- assembling -------------------------------------------------------------------------------------------


def build_digest(
    loaded: LoadedConfig,
    store: Store,
    team_name: str,
    today: date,
    *,
    until: datetime | None = None,
    since: datetime | None = None,
    spec: SpecView | None = None,
) -> Digest:
    """The digest of one team for ``today``. The period runs from the team's last digest (else a week before
    ``until``) to ``until`` (default: the end of ``today``, UTC)."""
    config = loaded.config
    team = config.team(team_name)
    spec = spec or load_spec_view(config, store, today)
    until = until or datetime.combine(today + timedelta(days=1), time(), tzinfo=UTC)
    since = since or last_digest_time(store, team.name, before=until) or until - PERIOD
    servers = config.servers_of_team(team.name)
    rows = spec.rows
    findings = [server_findings(loaded, store, server, rows) for server in servers]
    affected: dict[str, list[str]] = {}
    for finding in findings:
        for exposure in finding.exposures:
            affected.setdefault(exposure.key, []).append(finding.server)
    features = [_feature(row, affected.get(row["key"], [])) for row in _ordered(rows)]
    problems = list(spec.problems)
    unresolved = [f.feature for f in features if f.state == "deprecated" and not f.resolved]
    if unresolved:
        problems.append(
            f"Earliest removal not computed (shown as unresolved, not guessed) for: {', '.join(unresolved)}."
        )
    sdks = team_sdks(config, team)
    problems += unchecked_sources(store, config, sdks, since, until)  # "nothing new" only for sources read
    span_start, span_end = timeline_span(features, today)
    return Digest(
        team=team.name,
        channel=team.slack_channel,
        today=today.isoformat(),
        week=iso_week(today),
        since=_iso(since),
        until=_iso(until),
        changes=spec_changes(store, since, until),
        features=features,
        servers=findings,
        team_sdks=sdks,
        releases=releases_of_period(config, store, team, sdks, since, until),
        outlook=outlook(spec, features, today),
        revision_dates=[
            d.isoformat() for d in projected_releases(spec.calendar, spec.revisions, span_start, span_end, today)
        ],
        released_dates=sorted(
            r.released.isoformat() for r in spec.revisions if not r.prerelease and span_start <= r.released <= span_end
        ),
        problems=problems,
    )


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _ordered(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Deprecated rows first, soonest removal first (unresolved last, they need a human), then removed rows."""

    def key(row: dict[str, Any]) -> tuple[int, int, str, str]:
        removed = row["state"] != "deprecated"
        return (int(removed), int(row["earliest_removal"] is None), row["earliest_removal"] or "", row["feature"])

    return sorted(rows, key=key)


def _feature(row: dict[str, Any], servers: list[str]) -> Feature:
    return Feature(
        feature=row["feature"],
        key=row["key"],
        state=row["state"],
        deprecated_in=row.get("deprecated_in") or "",
        sep=row.get("sep") or "",
        migration=row.get("migration") or "",
        earliest_removal_text=row.get("earliest_removal_text") or "",
        window_starts=row.get("window_starts"),
        window_ends=row.get("window_ends"),
        earliest_removal=row.get("earliest_removal"),
        projected=bool(row.get("earliest_removal_projected")),
        days_left=row.get("days_left"),
        basis=row.get("basis") or "",
        resolved=bool(row.get("resolved")),
        flags=list(row.get("flags") or []),
        affected_servers=sorted(servers),
    )


def last_digest_time(store: Store, team: str, before: datetime | None = None) -> datetime | None:
    """When the team's last digest was queued (its first message's outbox row)."""
    latest: datetime | None = None
    for row in store.outbox():
        if row["kind"] != DIGEST_KIND or row["team"] != team or row["thread_of"]:
            continue
        created = parse_iso(row["created"])
        if created is None or (before is not None and created >= before):
            continue
        latest = created if latest is None or created > latest else latest
    return latest


def spec_changes(store: Store, since: datetime, until: datetime) -> list[ChangeItem]:
    items = []
    for event in store.events(since=since):
        kind = event["kind"].removeprefix(SPEC_CHANGE_PREFIX)
        if not event["kind"].startswith(SPEC_CHANGE_PREFIX) or kind not in SPEC_CHANGE_KINDS:
            continue
        created = parse_iso(event["created"])
        if created is not None and created >= until:
            continue
        payload = event["payload"]
        items.append(
            ChangeItem(
                kind=kind,
                subject=str(payload.get("subject", "")),
                before=payload.get("before"),
                after=payload.get("after"),
                recorded=event["created"],
            )
        )
    return items


def timeline_span(features: Sequence[Feature], today: date) -> tuple[date, date]:
    starts = [date.fromisoformat(f.window_starts) for f in features if f.window_starts and f.state == "deprecated"]
    ends = [date.fromisoformat(f.earliest_removal) for f in features if f.earliest_removal and f.state == "deprecated"]
    start = min([today - timedelta(days=90), *starts])
    end = max([today + timedelta(days=365), *(e + timedelta(days=120) for e in ends)])
    return start, end


# --- section 2: evidence that a server uses a deprecated feature ----------------------------------------

# Words that name a feature in what servers and SDKs say, by the registry row's key (its prefix). A row we
# have no entry for is matched by its own feature name. Patterns are case-insensitive unless marked.
FEATURE_TERMS: dict[str, tuple[str, ...]] = {
    "includecontext": (r"includeContext",),
    "http-sse": (
        r"http\s*\+\s*sse",
        r"(?-i:(?<![A-Z])SSE(?![A-Z]{2}))",  # SSE, SSEServerTransport; not CLASSES
        r"(?-i:(?<![A-Za-z])Sse(?=[A-Z]))",  # SseServerTransport
        r"\bsse\b",
        r"\bsse_",  # sse_client, sse_app
        r"server-sent events transport",
    ),
    "dynamic-client-registration": (r"dynamic client registration", r"client[_ ]registration"),
    "logging": (r"\blogging\b", r"notifications/message", r"\blogging/setLevel\b", r"\bsetLevel\b"),
    "sampling": (r"\bsampling\b", r"createMessage", r"create_message"),
    "roots": (r"\broots\b", r"roots/list", r"list_roots"),
}
# A match of the first also matching the second is about the first only ("includeContext … sampling").
MORE_SPECIFIC: dict[str, set[str]] = {"includecontext": {"sampling"}}
# Conformance scenarios are named after what they exercise; only these families are "used by the server" when
# such a scenario passes ("server-sse-…" scenarios test Streamable HTTP's streams, not the HTTP+SSE transport).
CONFORMANCE_FAMILIES = frozenset({"sampling", "roots", "logging", "includecontext"})


def _family(key: str) -> str | None:
    return next((family for family in FEATURE_TERMS if key.startswith(family)), None)


def _patterns(row: dict[str, Any]) -> list[re.Pattern[str]]:
    family = _family(row["key"])
    if family is not None:
        return [re.compile(p, re.IGNORECASE) for p in FEATURE_TERMS[family]]
    name = re.sub(r"\([^)]*\)", "", row["feature"]).strip() or row["feature"]
    return [re.compile(re.escape(name), re.IGNORECASE)]


def features_named(text: str, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The deprecated rows that ``text`` speaks of."""
    hits = [row for row in rows if any(p.search(text) for p in _patterns(row))]
    families = {_family(row["key"]) for row in hits}
    suppressed = set().union(*(MORE_SPECIFIC.get(f or "", set()) for f in families))
    return [row for row in hits if _family(row["key"]) not in suppressed]


def _capability_rows(capability: str, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    wanted = feature_key(capability)
    return [row for row in rows if row["key"] == wanted or _family(row["key"]) == wanted]


SNAPSHOT_ERAS = ("legacy", "modern")


def _snapshot_servers(folder: Path) -> list[tuple[str, Path]]:
    """(era, server.json) of a snapshot folder: DIR/legacy + DIR/modern, or a single-era DIR."""
    found = [(era, folder / era / "server.json") for era in SNAPSHOT_ERAS if (folder / era / "server.json").is_file()]
    if not found and (folder / "server.json").is_file():
        found.append(("single era", folder / "server.json"))
    return found


def snapshot_evidence(
    folder: Path, label: str, rows: Sequence[dict[str, Any]]
) -> tuple[list[tuple[str, Evidence]], str]:
    """Deprecated capabilities a snapshot's server.json declares → [(row key, evidence)], and what was read."""
    eras = _snapshot_servers(folder)
    declared: dict[str, list[str]] = {}
    for era, path in eras:
        try:
            server = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        capabilities = server.get("capabilities") if isinstance(server, dict) else None
        for capability in sorted(capabilities or {}):
            declared.setdefault(capability, []).append(era)
    found: list[tuple[str, Evidence]] = []
    for capability, in_eras in declared.items():
        where = f"{label}, {' and '.join(in_eras)} era{'s' if len(in_eras) > 1 else ''}"
        for row in _capability_rows(capability, rows):
            found.append((row["key"], Evidence("capability", f"declares the `{capability}` capability", where)))
    return found, (f"{label} ({', '.join(era for era, _ in eras)})" if eras else "")


def warning_evidence(report: dict[str, Any], label: str, rows: Sequence[dict[str, Any]]) -> list[tuple[str, Evidence]]:
    found = []
    for warning in report.get("deprecation_warnings") or []:
        message = str(warning.get("message", "")) if isinstance(warning, dict) else str(warning)
        kind = str(warning.get("kind", "DeprecationWarning")) if isinstance(warning, dict) else "DeprecationWarning"
        count = int(warning.get("count", 1)) if isinstance(warning, dict) else 1
        times = f" (×{count})" if count > 1 else ""
        for row in features_named(message, rows):
            found.append((row["key"], Evidence("sdk-warning", f"{kind}: {message}{times}", label)))
    return found


def conformance_evidence(
    report: dict[str, Any], label: str, rows: Sequence[dict[str, Any]]
) -> list[tuple[str, Evidence]]:
    """Passing conformance scenarios that exercise a deprecated feature (the server did use it).

    The scored scenarios that passed are only counted in the report, so the run's result files are read
    (``run_dir/conformance/<revision>/results``) while the run folder is still kept; unscored scenarios are
    listed in the report itself.
    """
    from watcher.suites.conformance import collect_checks

    passed: dict[str, str] = {}
    run_dir = report.get("run_dir")
    for entry in report.get("conformance") or []:
        if not isinstance(entry, dict):
            continue
        revision = str(entry.get("requirements", ""))
        for unscored in entry.get("unscored") or []:
            if unscored.get("passed"):
                passed.setdefault(str(unscored.get("scenario")), revision)
        if run_dir and revision:
            results = Path(run_dir) / "conformance" / revision / "results"
            if results.is_dir():
                for scenario, checks in collect_checks(results).items():
                    statuses = {str(c.get("status")) for c in checks}
                    if "SUCCESS" in statuses and not statuses & {"FAILURE"}:
                        passed.setdefault(scenario, revision)
    found = []
    candidates = [r for r in rows if _family(r["key"]) in CONFORMANCE_FAMILIES or _family(r["key"]) is None]
    for scenario, revision in sorted(passed.items()):
        for row in features_named(scenario.replace("-", " ").replace("_", " "), candidates):
            found.append(
                (row["key"], Evidence("conformance", f"conformance scenario `{scenario}` passed ({revision})", label))
            )
    return found


def transport_evidence(server: Server) -> list[Evidence]:
    path = server.http_path.rstrip("/")
    if server.transport == "http" and (path.endswith("/sse") or path == "sse"):
        return [Evidence("transport", f"serves an HTTP+SSE endpoint (`{server.http_path}`)", "configuration")]
    return []


def latest_run(store: Store, server: str, look_back: int = 20) -> dict[str, Any] | None:
    """The newest finished run that saw the server running (a beta that would not even install shows no
    warnings or scenarios, and must not hide an earlier run's evidence); else the newest finished run."""
    done = [r for r in store.runs(status="done", server=server, limit=look_back) if isinstance(r.get("report"), dict)]
    for run in done:
        report = run["report"]
        if (report.get("start") or {}).get("ok") or report.get("deprecation_warnings") or report.get("conformance"):
            return run
    return done[0] if done else None


def _run_label(run: dict[str, Any]) -> str:
    return f"suite run #{run['id']} ({run['sdk']} {run['sdk_version']})"


def server_findings(
    loaded: LoadedConfig, store: Store, server: Server, rows: Sequence[dict[str, Any]]
) -> ServerFindings:
    deprecated = [r for r in rows if r["state"] == "deprecated"]
    evidence: list[tuple[str, Evidence]] = []
    checked: list[str] = []
    gaps: list[str] = []
    if server.baseline_snapshot:
        folder = loaded.resolve(server.baseline_snapshot)
        found, read = snapshot_evidence(folder, f"baseline snapshot {server.baseline_snapshot}", deprecated)
        evidence += found
        if read:
            checked.append(read)
        else:
            gaps.append(f"baseline snapshot {server.baseline_snapshot} has no server.json")
    else:
        gaps.append("no baseline snapshot configured")
    run = latest_run(store, server.name)
    report = run["report"] if run and isinstance(run.get("report"), dict) else None
    if run is None or report is None:
        gaps.append("no finished suite run yet")
    else:
        label = _run_label(run)
        checked.append(f"{label}: SDK deprecation warnings, conformance")
        evidence += warning_evidence(report, label, deprecated)
        evidence += conformance_evidence(report, label, deprecated)
        candidate = Path(str(report.get("run_dir", ""))) / "snapshot" if report.get("run_dir") else None
        if candidate is not None and candidate.is_dir():
            found, read = snapshot_evidence(candidate, f"{label} snapshot", deprecated)
            evidence += found
            if read:
                checked.append(read)
    transport = transport_evidence(server)
    checked.append(f"transport: {server.transport}" + (f" at {server.http_path}" if server.transport == "http" else ""))
    sse = [r for r in deprecated if _family(r["key"]) == "http-sse"]
    evidence += [(row["key"], item) for row in sse for item in transport]
    by_key: dict[str, list[Evidence]] = {}
    for key, item in evidence:
        bucket = by_key.setdefault(key, [])
        if item not in bucket:
            bucket.append(item)
    exposures = [
        Exposure(row["feature"], row["key"], row.get("earliest_removal"), row.get("days_left"), by_key[row["key"]])
        for row in _ordered(deprecated)
        if row["key"] in by_key
    ]
    return ServerFindings(server.name, server.sdk, exposures, checked, gaps)


# --- section 3: the team's SDK releases of the period -------------------------------------------------------


def team_sdks(config: WatcherConfig, team: Team) -> list[str]:
    names = list(team.sdks)
    for server in config.servers_of_team(team.name):
        if server.sdk not in names:
            names.append(server.sdk)
    return names


def _wanted(team: Team, version: str) -> bool:
    if team.include and not any(fnmatch.fnmatchcase(version, p) for p in team.include):
        return False
    return not any(fnmatch.fnmatchcase(version, p) for p in team.exclude)


def slack_thread_url(channel: str, ts: str) -> str:
    """A link to a Slack message that Slack resolves to the signed-in workspace."""
    return f"https://slack.com/archives/{channel}/p{ts.replace('.', '')}"


def thread_ref(store: Store, key: str) -> ThreadRef | None:
    row = store.outbox_row(key)
    if row is None:
        return None
    url = slack_thread_url(row["slack_channel"], row["slack_ts"]) if row["slack_channel"] and row["slack_ts"] else None
    return ThreadRef(key, row["status"], row["slack_channel"], row["slack_ts"], url)


def releases_of_period(
    config: WatcherConfig, store: Store, team: Team, sdks: Sequence[str], since: datetime, until: datetime
) -> list[ReleaseItem]:
    items = []
    for event in store.events(kind="release", since=since):
        payload = event["payload"]
        created = parse_iso(event["created"])
        if payload.get("sdk") not in sdks or (created is not None and created >= until):
            continue
        if payload.get("yanked") or not _wanted(team, str(payload["version"])):
            continue
        sdk, version, prerelease = payload["sdk"], str(payload["version"]), bool(payload.get("prerelease"))
        thread = thread_ref(store, f"release:{sdk}:{version}:{team.name}")
        servers = [s for s in config.servers_of_team(team.name) if s.sdk == sdk]
        verdicts = [_verdict(config, store, s, version, prerelease, team) for s in servers]
        items.append(
            ReleaseItem(
                sdk=sdk,
                registry=str(payload.get("registry", "")),
                package=str(payload.get("package", "")),
                version=version,
                prerelease=prerelease,
                first_seen=payload.get("first_seen"),
                published=payload.get("published"),
                page=release_page(str(payload.get("registry", "")), str(payload.get("package", "")), version),
                verdicts=verdicts,
                thread=thread,
            )
        )
    return items


def _verdict(
    config: WatcherConfig, store: Store, server: Server, version: str, prerelease: bool, team: Team
) -> Verdict:
    runs = [
        r for r in store.runs(server=server.name, limit=1000) if r["sdk_version"] == version and r["sdk"] == server.sdk
    ]
    thread = thread_ref(store, f"run:{server.name}:{version}:{team.name}")
    if not runs:
        if not prerelease and not config.suites.on_stable:
            return Verdict(server.name, "not-run", "stable releases are not tested (suites.on_stable is off)")
        return Verdict(server.name, "pending", "not queued yet")
    run = runs[0]
    if run["status"] != "done":
        return Verdict(server.name, "pending", f"suite run #{run['id']} {run['status']}", run["id"], thread)
    report = run["report"] or {}
    reasons = [str(r.get("reason", "")) for r in report.get("reasons") or [] if isinstance(r, dict)]
    detail = "; ".join(reasons[:3]) + (f" (+{len(reasons) - 3} more)" if len(reasons) > 3 else "")
    return Verdict(server.name, str(run["verdict"] or "error"), detail, run["id"], thread)


# --- section 4: what is coming --------------------------------------------------------------------------------


def outlook(spec: SpecView, features: Iterable[Feature], today: date) -> Outlook:
    slot = next_release(spec.calendar, spec.revisions, today - timedelta(days=1), today)
    beta_start = beta_end = None
    beta_open = False
    if slot is not None:
        start, end = beta_window(spec.calendar, slot.date)
        beta_start, beta_end = start.isoformat(), end.isoformat()
        beta_open = start <= today <= end
    upcoming = [
        f
        for f in features
        if f.state == "deprecated" and f.earliest_removal and f.earliest_removal >= today.isoformat()
    ]
    first = min((f.earliest_removal for f in upcoming if f.earliest_removal), default=None)
    return Outlook(
        next_revision=slot.date.isoformat() if slot else None,
        next_revision_note=slot.note if slot else "no release projected by the calendar",
        next_revision_actual=bool(slot and slot.actual),
        next_revision_name=slot.revision if slot else None,
        beta_window_start=beta_start,
        beta_window_end=beta_end,
        beta_window_open=beta_open,
        next_removal=first,
        next_removal_days=(date.fromisoformat(first) - today).days if first else None,
        next_removal_features=[f.feature for f in upcoming if f.earliest_removal == first],
    )
