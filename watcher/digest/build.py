"""Assembling one team's weekly digest from the state only (no network): the four sections, for one period.

1. what is on its way out (``sections.changes``), 2. where the team is affected (``sections.exposure``),
3. the team's SDK releases of the period (``sections.releases``), 4. what is coming (``sections.outlook``).
Rendering lives apart (``document``, ``slack``, ``markdown``, ``timeline``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta

from watcher.config import LoadedConfig
from watcher.core.store import Store
from watcher.core.timefmt import iso, parse_iso
from watcher.digest.model import DIGEST_KIND, PERIOD, Digest, Feature, iso_week
from watcher.digest.sections.changes import feature_of, spec_changes
from watcher.digest.sections.exposure import server_findings
from watcher.digest.sections.outlook import outlook
from watcher.digest.sections.readiness import readiness_lines
from watcher.digest.sections.releases import releases_of_period, team_sdks
from watcher.polling.alerts import unchecked_sources
from watcher.spec.calendar import projected_releases
from watcher.spec.view import SpecView, load_spec_view, ordered_rows


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
    features = [feature_of(row, affected.get(row["key"], [])) for row in ordered_rows(rows)]
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
        since=iso(since) or "",
        until=iso(until) or "",
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
        registry_unknown=spec.registry_unknown,
        readiness=readiness_lines(config, store, team.name, today),
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


def timeline_span(features: Sequence[Feature], today: date) -> tuple[date, date]:
    starts = [date.fromisoformat(f.window_starts) for f in features if f.window_starts and f.state == "deprecated"]
    ends = [date.fromisoformat(f.earliest_removal) for f in features if f.earliest_removal and f.state == "deprecated"]
    start = min([today - timedelta(days=90), *starts])
    end = max([today + timedelta(days=365), *(e + timedelta(days=120) for e in ends)])
    return start, end
