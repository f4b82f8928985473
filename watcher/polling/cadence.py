"""Calendar-aware polling: how often each SDK source is polled now, and why.

Tier 1 SDK betas arrive in the ``spec.calendar.beta_lead_days`` before each spec release. Inside that
window the *window sources* (``schedule.window_sdks``; by default the SDKs the configured servers are
built on, whose betas start a suite run) are polled every ``schedule.window_poll_minutes``. Every
other poll — the other sources all year, the window sources outside their window — runs at one
*outside interval*, derived so that the requests per day, averaged over a year, stay within
today's budget: ``sources × 1440 / schedule.poll_minutes`` (one conditional request per source and
poll). The arithmetic is in docs/configuration.md.

Everything here is pure: the decision is a function of the settings, the calendar and ``now``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from watcher.config import LoadedConfig, WatcherConfig
from watcher.core.store import Store
from watcher.spec.calendar import ReleaseCalendar, ReleaseSlot, first_release_on_or_after
from watcher.spec.revisions import SpecRevision

DAY_MINUTES = 1440
OUTSIDE_CAP_MINUTES = 360.0
"""The outside interval never grows beyond this; past it the window cadence is stretched instead."""


@dataclass(frozen=True)
class Budget:
    """The two intervals, derived once from the configuration (no dates involved)."""

    sources: int
    window_sources: tuple[str, ...]
    budget_minutes: float
    """``schedule.poll_minutes``: the flat cadence the budget is measured against."""
    window_minutes: float | None
    """The in-window interval of the window sources; None: calendar-aware polling is off."""
    outside_minutes: float
    window_fraction: float
    """The share of a year inside beta windows: (lead days + 1) × releases per year / 365."""
    stretched: bool = False
    """True: the window cadence asked for did not fit the budget and was made longer."""

    @property
    def enabled(self) -> bool:
        return self.window_minutes is not None

    @property
    def budget_per_day(self) -> float:
        return self.sources * DAY_MINUTES / self.budget_minutes

    def requests_per_day(self, in_window: bool) -> float:
        """Requests on one day inside (or outside) a window, one conditional request per source and poll."""
        if self.window_minutes is None:
            return self.budget_per_day
        k = len(self.window_sources)
        fast = DAY_MINUTES / (self.window_minutes if in_window else self.outside_minutes)
        return k * fast + (self.sources - k) * DAY_MINUTES / self.outside_minutes

    @property
    def average_per_day(self) -> float:
        f = self.window_fraction
        return f * self.requests_per_day(True) + (1 - f) * self.requests_per_day(False)

    def as_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "sources": self.sources,
            "window_sources": list(self.window_sources),
            "window_minutes": self.window_minutes,
            "outside_minutes": self.outside_minutes,
            "window_fraction": round(self.window_fraction, 4),
            "budget_per_day": round(self.budget_per_day, 1),
            "average_per_day": round(self.average_per_day, 1),
            "stretched": self.stretched,
        }


def window_sources(config: WatcherConfig) -> tuple[str, ...]:
    """``schedule.window_sdks``, else the SDKs that configured servers are built on (in config order)."""
    chosen = config.schedule.window_sdks
    if chosen is None:
        chosen = [s.sdk for s in config.servers]
    wanted = set(chosen)
    return tuple(s.name for s in config.sdks if s.name in wanted)


def plan_budget(config: WatcherConfig) -> Budget:
    """The window and outside intervals for this configuration.

    With n sources, k of them window sources, a window share f of the year, a budget of b = 1440 / P
    requests per source and day and W = 1440 / w polls per day in a window, the yearly average
    k·(f·W + (1−f)·1440/O) + (n−k)·1440/O ≤ n·b holds for O ≥ 1440·(n − k·f) / (n·b − k·f·W).
    """
    schedule = config.schedule
    n = len(config.sdks)
    budget = schedule.poll_minutes
    w = schedule.window_poll_minutes
    chosen = window_sources(config)
    cal = config.spec.calendar
    fraction = min(1.0, (cal.beta_lead_days + 1) * len(cal.months) / 365)  # the release day is in the window
    if w is None or w >= budget or not chosen or n == 0 or fraction == 0:
        # Nothing to gain (or nothing to watch): today's flat cadence.
        return Budget(n, chosen, budget, None, budget, fraction)
    k = len(chosen)
    b = DAY_MINUTES / budget
    spare = n * b - k * fraction * DAY_MINUTES / w
    outside = DAY_MINUTES * (n - k * fraction) / spare if spare > 0 else math.inf
    if outside <= OUTSIDE_CAP_MINUTES:
        return Budget(n, chosen, budget, w, float(math.ceil(outside)), fraction)
    # The window cadence asked for does not fit: keep the outside interval at its cap, widen the window's.
    outside = OUTSIDE_CAP_MINUTES
    left = n * b - DAY_MINUTES * (n - k * fraction) / outside
    stretched = math.ceil(DAY_MINUTES * k * fraction / left) if left > 0 else outside
    return Budget(n, chosen, budget, float(min(stretched, outside)), outside, fraction, stretched=True)


@dataclass(frozen=True)
class Cadence:
    """The decision for one moment."""

    in_window: bool
    window_interval: float
    """Minutes between polls of the window sources now."""
    other_interval: float
    """Minutes between polls of every other source."""
    next_change: datetime | None
    """When the window opens or closes next (the job re-plans then); None: no window ahead."""
    release: ReleaseSlot | None
    """The spec release whose beta window this is (or is next)."""
    window: tuple[datetime, datetime] | None
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {
            "in_window": self.in_window,
            "window_interval_minutes": self.window_interval,
            "other_interval_minutes": self.other_interval,
            "next_change": self.next_change.isoformat().replace("+00:00", "Z") if self.next_change else None,
            "release": self.release.date.isoformat() if self.release else None,
            "window": [w.date().isoformat() for w in self.window] if self.window else None,
            "reason": self.reason,
        }


def beta_window_of(calendar: ReleaseCalendar, release: date) -> tuple[datetime, datetime]:
    """From 00:00 UTC ``beta_lead_days`` before the release to the end of the release day."""
    start = datetime.combine(release - timedelta(days=calendar.beta_lead_days), time(), UTC)
    return start, datetime.combine(release + timedelta(days=1), time(), UTC)


def decide(budget: Budget, calendar: ReleaseCalendar, releases: Sequence[SpecRevision], now: datetime) -> Cadence:
    """The cadence at ``now``: a pure function of the budget, the calendar (with known releases) and now."""
    flat = budget.outside_minutes
    if not budget.enabled:
        return Cadence(
            False, flat, flat, None, None, None, f"every source every {flat:g} min (calendar-aware polling off)"
        )
    assert budget.window_minutes is not None
    names = ", ".join(budget.window_sources)
    others = budget.sources - len(budget.window_sources)
    slot = first_release_on_or_after(calendar, releases, now.date(), today=now.date())
    if slot is None:
        reason = f"no spec release projected: every source every {flat:g} min"
        return Cadence(False, flat, flat, None, None, None, reason)
    start, end = beta_window_of(calendar, slot.date)
    what = f"the spec release {'on' if slot.actual else 'projected for'} {slot.date.isoformat()} ({slot.note})"
    if start <= now < end:
        reason = (
            f"inside the beta window of {what}, {start.date().isoformat()} to {slot.date.isoformat()}: "
            f"{names} every {budget.window_minutes:g} min, the other {others} source(s) every {flat:g} min"
        )
        return Cadence(True, budget.window_minutes, flat, end, slot, (start, end), reason)
    reason = (
        f"outside beta windows: every source every {flat:g} min; the next window opens "
        f"{start.date().isoformat()}, {calendar.beta_lead_days} days before {what}"
    )
    return Cadence(False, flat, flat, start, slot, (start, end), reason)


def next_poll(cadence: Cadence, last_poll: datetime) -> datetime:
    """When the window sources are polled next: one interval on, or sooner when the window opens."""
    due = last_poll + timedelta(minutes=cadence.window_interval)
    if cadence.next_change is not None and cadence.next_change < due:
        return cadence.next_change
    return due


def simulate_requests(
    budget: Budget, calendar: ReleaseCalendar, releases: Sequence[SpecRevision], start: datetime, days: int
) -> list[int]:
    """Requests per day over ``days`` simulated days, following the cadence (the job's own re-planning)."""
    end = start + timedelta(days=days)
    per_day = [0] * days
    # The window sources re-plan at every poll; the other sources keep one fixed interval.
    moment = start
    while moment < end:
        cadence = decide(budget, calendar, releases, moment)
        per_day[(moment - start).days] += len(budget.window_sources) if budget.enabled else budget.sources
        moment = next_poll(cadence, moment)
    if budget.enabled:
        step = timedelta(minutes=budget.outside_minutes)
        moment = start
        others = budget.sources - len(budget.window_sources)
        while moment < end:
            per_day[(moment - start).days] += others
            moment += step
    return per_day


def current_cadence(loaded: LoadedConfig, store: Store, budget: Budget, now: datetime) -> Cadence:
    """The decision for the service now: the calendar from the config, releases from the last spec poll."""
    from watcher.spec.watch import KV_REVISIONS

    releases = [SpecRevision.from_json(r) for r in store.get_kv(KV_REVISIONS) or []]
    return decide(budget, ReleaseCalendar.from_settings(loaded.config.spec.calendar), releases, now)
