"""The spec's release calendar: projected revision dates, actual releases winning over projections.

SEP-3398: revisions generally ship on the last Tuesday of March and September; the release once planned
for December 2026 moved to late March 2027. All of it is configuration (``spec.calendar``): the months,
the weekday, moved releases (``"YYYY-MM": "YYYY-MM" | "YYYY-MM-DD" | "skip"``) and the SDK-beta lead.

How actual releases and projections combine (``release_slots``):

- every final revision from the releases source is a slot at its actual release date, and it takes the
  place of the nearest projected slot within ``MATCH_DAYS`` (a release that slipped a week is still
  "the March release", not an extra one);
- an RC whose final revision is not out yet names the planned date (its tag's date) of the next slot;
- a projected slot that lies more than ``LATE_DAYS`` before ``today`` and that no release took did not
  happen, and is dropped (within ``LATE_DAYS`` it is a late release, so a release a few days late does not
  make every earliest-removal date jump a half-year and back).
"""

from __future__ import annotations

import calendar as _stdlib_calendar
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import TYPE_CHECKING

from watcher.core.errors import ConfigError
from watcher.spec.settings import Calendar as CalendarSettings

if TYPE_CHECKING:
    from watcher.spec.revisions import SpecRevision

MATCH_DAYS = 60
"""An actual release within this many days of a projected slot is that slot's release."""
LATE_DAYS = 30
"""A projected slot this many days past without a release is taken not to have happened."""
HORIZON_YEARS = 4
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class ReleaseSlot:
    date: date
    actual: bool
    """True: released (known from the spec repo's releases); False: projected."""
    revision: str | None = None
    """The revision released (or announced by an RC) in this slot, when known."""
    note: str = ""
    """How the date was obtained, e.g. "last Tuesday of March 2027" or "revision 2026-07-28, released"."""


@dataclass(frozen=True)
class ReleaseCalendar:
    months: tuple[int, ...] = (3, 9)
    weekday: int = 1
    moved: dict[str, str] = field(default_factory=lambda: {"2026-12": "2027-03"})
    beta_lead_days: int = 45
    effective_from: date | None = None
    """No projection before this date (the calendar's adoption). None: projections from any year."""

    @classmethod
    def from_settings(cls, settings: CalendarSettings) -> ReleaseCalendar:
        moved = dict(settings.moved)
        for planned, target in moved.items():
            if not re.fullmatch(r"\d{4}-\d{2}", planned) or not 1 <= int(planned[5:]) <= 12:
                raise ConfigError(f"spec.calendar.moved: {planned!r} is not a month written YYYY-MM")
            if target != "skip" and _target_date(target, 1) is None:
                raise ConfigError(f'spec.calendar.moved.{planned}: {target!r} is not YYYY-MM, YYYY-MM-DD or "skip"')
        # The config model may gain an adoption date later; read it when present.
        effective = getattr(settings, "effective_from", None)
        return cls(
            months=tuple(settings.months),
            weekday=settings.weekday,
            moved=moved,
            beta_lead_days=settings.beta_lead_days,
            effective_from=date.fromisoformat(effective) if isinstance(effective, str) else effective,
        )

    def last_weekday(self, year: int, month: int) -> date:
        last = date(year, month, _stdlib_calendar.monthrange(year, month)[1])
        return last - timedelta(days=(last.weekday() - self.weekday) % 7)

    def planned(self, first_year: int, last_year: int) -> list[ReleaseSlot]:
        """Projected slots of these years, moves applied (no knowledge of actual releases)."""
        slots: dict[date, ReleaseSlot] = {}

        def add(slot: ReleaseSlot) -> None:
            if self.effective_from and slot.date < self.effective_from:
                return
            if slot.date in slots:
                earlier = slots[slot.date]
                slots[slot.date] = replace(earlier, note=f"{earlier.note}; {slot.note}")
            else:
                slots[slot.date] = slot

        for year in range(first_year, last_year + 1):
            for month in self.months:
                key = f"{year:04d}-{month:02d}"
                if key not in self.moved:
                    day = self.last_weekday(year, month)
                    add(ReleaseSlot(day, actual=False, note=f"last {WEEKDAYS[self.weekday]} of {_month_name(day)}"))
        for planned, target in self.moved.items():
            if target == "skip" or not first_year <= int(planned[:4]) <= last_year:
                continue
            moved_to = _target_date(target, self.weekday)
            assert moved_to is not None  # validated in from_settings
            add(
                ReleaseSlot(
                    moved_to, actual=False, note=f"release planned for {planned} moved to {_month_name(moved_to)}"
                )
            )
        return sorted(slots.values(), key=lambda s: s.date)


def as_calendar(calendar: ReleaseCalendar | CalendarSettings) -> ReleaseCalendar:
    return calendar if isinstance(calendar, ReleaseCalendar) else ReleaseCalendar.from_settings(calendar)


def release_slots(
    calendar: ReleaseCalendar | CalendarSettings,
    releases: Sequence[SpecRevision],
    start: date,
    end: date,
    today: date | None = None,
) -> list[ReleaseSlot]:
    """Actual and projected release slots between start and end (inclusive), in date order."""
    cal = as_calendar(calendar)
    planned = cal.planned(start.year - 1, end.year + 1)
    taken: set[int] = set()
    result: list[ReleaseSlot] = []
    finals = sorted((r for r in releases if not r.prerelease), key=lambda r: r.released)
    released_revisions = {r.revision for r in finals}
    for revision in finals:
        _take_nearest(planned, taken, revision.released)
        result.append(
            ReleaseSlot(revision.released, actual=True, revision=revision.revision, note=_released_note(revision))
        )
    pending_rcs = {r.revision: r for r in releases if r.prerelease and r.revision not in released_revisions}
    for rc_revision, rc in sorted(pending_rcs.items()):
        day = date.fromisoformat(rc_revision)
        if today and day < today - timedelta(days=LATE_DAYS):
            continue  # the RC's date passed long ago without a release: it tells us nothing any more
        _take_nearest(planned, taken, day)
        result.append(ReleaseSlot(day, actual=False, revision=rc_revision, note=f"planned date of RC {rc.tag}"))
    for index, slot in enumerate(planned):
        if index in taken or (today and slot.date < today - timedelta(days=LATE_DAYS)):
            continue
        result.append(slot)
    return sorted((s for s in result if start <= s.date <= end), key=lambda s: (s.date, not s.actual))


def projected_releases(
    calendar: ReleaseCalendar | CalendarSettings,
    releases: Sequence[SpecRevision],
    start: date,
    end: date,
    today: date | None = None,
) -> list[date]:
    """Release dates (actual where known, else projected) between start and end, inclusive."""
    return sorted({slot.date for slot in release_slots(calendar, releases, start, end, today)})


def first_release_on_or_after(
    calendar: ReleaseCalendar | CalendarSettings,
    releases: Sequence[SpecRevision],
    day: date,
    today: date | None = None,
) -> ReleaseSlot | None:
    end = date(day.year + HORIZON_YEARS, 12, 31)
    slots = release_slots(calendar, releases, day, end, today)
    return slots[0] if slots else None


def next_release(
    calendar: ReleaseCalendar | CalendarSettings,
    releases: Sequence[SpecRevision],
    after: date,
    today: date | None = None,
) -> ReleaseSlot | None:
    """The first release strictly after ``after``."""
    return first_release_on_or_after(calendar, releases, after + timedelta(days=1), today)


def beta_window(calendar: ReleaseCalendar | CalendarSettings, release: date) -> tuple[date, date]:
    """When Tier 1 SDK betas for this release are expected: (release − beta_lead_days, release)."""
    return release - timedelta(days=as_calendar(calendar).beta_lead_days), release


def add_months(day: date, months: int) -> date:
    """Calendar months later; the day is clamped to the month's length (e.g. 31 Aug + 1 month = 30 Sep)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, _stdlib_calendar.monthrange(year, month + 1)[1]))


# --- helpers ---------------------------------------------------------------------------------------------


def _take_nearest(planned: Sequence[ReleaseSlot], taken: set[int], day: date) -> None:
    candidates: Iterable[tuple[int, int]] = (
        (abs((slot.date - day).days), index) for index, slot in enumerate(planned) if index not in taken
    )
    best = min((c for c in candidates if c[0] <= MATCH_DAYS), default=None)
    if best is not None:
        taken.add(best[1])


def _released_note(revision: SpecRevision) -> str:
    if revision.released.isoformat() == revision.revision:
        return f"revision {revision.revision}, released"
    return f"revision {revision.revision}, released {revision.released.isoformat()}"


def _target_date(target: str, weekday: int) -> date | None:
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", target):
            return date.fromisoformat(target)
        if re.fullmatch(r"\d{4}-\d{2}", target):
            return ReleaseCalendar(weekday=weekday).last_weekday(int(target[:4]), int(target[5:]))
    except ValueError:
        return None
    return None


def _month_name(day: date) -> str:
    return f"{_stdlib_calendar.month_name[day.month]} {day.year}"
