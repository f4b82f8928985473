"""The data of `/deprecations`: the registry rows with computed dates, basis and countdowns, which servers show
evidence of using each, and the digest's timeline picture for the same rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from watcher.digest.sections.changes import SpecView
from watcher.web.context import WebContext


@dataclass(frozen=True)
class ServerUse:
    server: str
    evidence: list[str]


@dataclass(frozen=True)
class FeatureRow:
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
    flags: list[str]
    used_by: list[ServerUse]


@dataclass(frozen=True)
class DeprecationsPage:
    today: str
    features: list[FeatureRow]
    problems: list[str]
    checked: dict[str, list[str]]
    """Per server, what was looked at for evidence (so "not seen" says where nobody looked)."""


def collect_deprecations(ctx: WebContext, today: date) -> DeprecationsPage:
    return _collect(ctx, today)[0]


def _collect(ctx: WebContext, today: date) -> tuple[DeprecationsPage, SpecView]:
    from watcher.digest.sections.changes import load_spec_view, ordered_rows
    from watcher.digest.sections.exposure import server_findings

    spec = load_spec_view(ctx.loaded.config, ctx.store, today)
    uses: dict[str, list[ServerUse]] = {}
    checked: dict[str, list[str]] = {}
    for server in ctx.loaded.config.servers:
        findings = server_findings(ctx.loaded, ctx.store, server, spec.rows)
        checked[server.name] = [ctx.clean(c) for c in findings.checked] + [ctx.clean(g) for g in findings.gaps]
        for exposure in findings.exposures:
            uses.setdefault(exposure.key, []).append(
                ServerUse(server.name, [ctx.clean(f"{e.detail} ({e.source})") for e in exposure.evidence])
            )
    features = [
        FeatureRow(
            feature=str(row["feature"]),
            key=str(row["key"]),
            state=str(row["state"]),
            deprecated_in=str(row.get("deprecated_in") or ""),
            sep=str(row.get("sep") or ""),
            migration=str(row.get("migration") or ""),
            earliest_removal_text=str(row.get("earliest_removal_text") or ""),
            window_starts=row.get("window_starts"),
            window_ends=row.get("window_ends"),
            earliest_removal=row.get("earliest_removal"),
            projected=bool(row.get("earliest_removal_projected")),
            days_left=row.get("days_left"),
            basis=str(row.get("basis") or ""),
            resolved=bool(row.get("resolved")),
            flags=[str(f) for f in row.get("flags") or []],
            used_by=uses.get(str(row["key"]), []),
        )
        for row in ordered_rows(spec.rows)
    ]
    return DeprecationsPage(today.isoformat(), features, [ctx.clean(p) for p in spec.problems], checked), spec


def timeline_png(ctx: WebContext, today: date) -> bytes:
    """The digest's timeline picture for every row, the features any server uses drawn as "in use"."""
    from watcher.digest.build import timeline_span
    from watcher.digest.model import Feature
    from watcher.digest.timeline import bars_of, render_timeline
    from watcher.spec.calendar import projected_releases

    page, spec = _collect(ctx, today)
    features = [
        Feature(
            feature=f.feature,
            key=f.key,
            state=f.state,
            deprecated_in=f.deprecated_in,
            sep=f.sep,
            migration=f.migration,
            earliest_removal_text=f.earliest_removal_text,
            window_starts=f.window_starts,
            window_ends=f.window_ends,
            earliest_removal=f.earliest_removal,
            projected=f.projected,
            days_left=f.days_left,
            basis=f.basis,
            resolved=f.resolved,
            flags=f.flags,
            affected_servers=[u.server for u in f.used_by],
        )
        for f in page.features
    ]
    span_start, span_end = timeline_span(features, today)
    revisions = projected_releases(spec.calendar, spec.revisions, span_start, span_end, today)
    released = [r.released for r in spec.revisions if not r.prerelease and span_start <= r.released <= span_end]
    picture = render_timeline(
        bars_of(features, today), today, revisions, released, title="MCP deprecations: deprecated → earliest removal"
    )
    return picture.png
