"""The data of `/deprecations`: the registry rows with computed dates, basis and countdowns, which servers show
evidence of using each, and the digest's timeline picture for the same rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from watcher.digest.model import Feature
from watcher.spec.view import SpecView
from watcher.web.context import WebContext


@dataclass(frozen=True)
class ServerUse:
    server: str
    evidence: list[str]


@dataclass(frozen=True)
class FeatureRow:
    """A registry row as the digest shows it, and the servers that show evidence of using it."""

    row: Feature
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
    from watcher.digest.sections.changes import feature_of
    from watcher.digest.sections.exposure import server_findings
    from watcher.spec.view import load_spec_view, ordered_rows

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
        FeatureRow(feature_of(row, [u.server for u in uses.get(str(row["key"]), [])]), uses.get(str(row["key"]), []))
        for row in ordered_rows(spec.rows)
    ]
    return DeprecationsPage(today.isoformat(), features, _problems(ctx, spec), checked), spec


def _problems(ctx: WebContext, spec: SpecView) -> list[str]:
    """The spec source's condition worded for this page (the digest's own lines speak of the digest), then
    the rest of the spec view's problems (SEP dates that could not be resolved, …)."""
    from watcher.ops.figures import status_figures
    from watcher.web.overview import spec_banners

    source = status_figures(ctx.loaded.config, ctx.store).spec
    lines = spec_banners(
        ctx,
        source,
        ctx.now(),
        unknown="the table below is empty because nothing is known, not because nothing is deprecated",
        dates="the rows below",
    )
    return lines + [ctx.clean(p) for p in spec.problems if not p.startswith(SPEC_SOURCE_LINES)]


SPEC_SOURCE_LINES = ("The spec's deprecated-features registry", "The spec registry", "The spec releases")
"""How the spec view's own lines about the spec source begin; this page words that condition itself."""


def timeline_png(ctx: WebContext, today: date) -> bytes:
    """The digest's timeline picture for every row, the features any server uses drawn as "in use"."""
    from watcher.digest.build import timeline_span
    from watcher.digest.timeline import bars_of, render_timeline
    from watcher.spec.calendar import projected_releases

    page, spec = _collect(ctx, today)
    features = [f.row for f in page.features]
    span_start, span_end = timeline_span(features, today)
    revisions = projected_releases(spec.calendar, spec.revisions, span_start, span_end, today)
    released = [r.released for r in spec.revisions if not r.prerelease and span_start <= r.released <= span_end]
    picture = render_timeline(
        bars_of(features, today), today, revisions, released, title="MCP deprecations: deprecated → earliest removal"
    )
    return picture.png
