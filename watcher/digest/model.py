"""The weekly digest's content as plain data: what ``build_digest`` assembles and every rendering reads."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from typing import Any

DIGEST_KIND = "digest"
"""The outbox kind of every digest message."""
PERIOD = timedelta(days=7)


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
    before: Mapping[str, object] | None
    """The stored row before (a spec `DeprecationRow`, or a revision's JSON), as the change event recorded it."""
    after: Mapping[str, object] | None
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
    registry_unknown: bool = False
    """True: the spec's registry could not be read and no earlier copy exists, so every count is unknown."""
    readiness: list[str] = field(default_factory=list)
    """One line per upcoming revision with a readiness run (sections.readiness)."""

    @property
    def deprecated(self) -> list[Feature]:
        return [f for f in self.features if f.state == "deprecated"]

    @property
    def removed(self) -> list[Feature]:
        return [f for f in self.features if f.state != "deprecated"]

    def to_json(self) -> dict[str, Any]:
        plain: dict[str, Any] = json.loads(json.dumps(asdict(self), default=str))
        return plain


UNKNOWN_REGISTRY = "unknown: the registry could not be read"
"""What every rendering of the digest says (instead of counts that would read as an all-clear) when
``Digest.registry_unknown``."""


def iso_week(day: date) -> str:
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"
