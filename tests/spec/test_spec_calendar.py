from __future__ import annotations

from datetime import date

import pytest

from watcher.core.errors import ConfigError
from watcher.spec.calendar import (
    ReleaseCalendar,
    add_months,
    beta_window,
    next_release,
    projected_releases,
    release_slots,
)
from watcher.spec.revisions import SpecRevision
from watcher.spec.settings import Calendar

DEFAULT = ReleaseCalendar.from_settings(Calendar())


def final(revision: str, released: str | None = None) -> SpecRevision:
    return SpecRevision(revision, revision, date.fromisoformat(released or revision), prerelease=False)


def rc(revision: str, published: str) -> SpecRevision:
    return SpecRevision(f"{revision}-RC", revision, date.fromisoformat(published), prerelease=True)


@pytest.mark.parametrize(
    ("year", "month", "expected"),
    [
        (2026, 9, "2026-09-29"),
        (2027, 3, "2027-03-30"),
        (2027, 9, "2027-09-28"),
        (2028, 3, "2028-03-28"),  # leap year
        (2028, 9, "2028-09-26"),
        (2029, 3, "2029-03-27"),
        (2031, 9, "2031-09-30"),  # the month's last day is itself a Tuesday
    ],
)
def test_last_tuesday_of_the_month(year, month, expected):
    assert DEFAULT.last_weekday(year, month) == date.fromisoformat(expected)


@pytest.mark.parametrize(
    ("settings", "start", "end", "expected"),
    [
        # December 2026 moved to late March 2027, which is also a regular slot: one release, not two.
        (Calendar(), "2026-10-01", "2028-12-31", ["2027-03-30", "2027-09-28", "2028-03-28", "2028-09-26"]),
        (Calendar(moved={}), "2026-10-01", "2027-06-30", ["2027-03-30"]),
        (Calendar(moved={"2027-09": "2027-10"}), "2027-06-01", "2028-06-30", ["2027-10-26", "2028-03-28"]),
        (Calendar(moved={"2027-09": "skip"}), "2027-01-01", "2028-06-30", ["2027-03-30", "2028-03-28"]),
        (Calendar(moved={"2027-09": "2027-09-21"}), "2027-09-01", "2027-12-31", ["2027-09-21"]),
        (Calendar(weekday=2, months=[6, 12], moved={}), "2027-01-01", "2027-12-31", ["2027-06-30", "2027-12-29"]),
    ],
)
def test_projected_releases_apply_the_configured_calendar(settings, start, end, expected):
    got = projected_releases(settings, [], date.fromisoformat(start), date.fromisoformat(end))
    assert [d.isoformat() for d in got] == expected


def test_the_moved_december_release_is_named_in_the_slot_note():
    [march] = release_slots(Calendar(), [], date(2027, 3, 1), date(2027, 3, 31))
    assert march.date == date(2027, 3, 30)
    assert not march.actual
    assert "2026-12 moved to March 2027" in march.note
    assert not any(s.date.month == 12 for s in DEFAULT.planned(2026, 2027))


@pytest.mark.parametrize(
    ("releases", "expected"),
    [
        # Released a week early: the actual date replaces the March projection instead of adding a release.
        ([final("2027-03-23")], ["2027-03-23", "2027-09-28"]),
        # Published a day after the revision's date: the publication date counts.
        ([final("2027-03-30", "2027-03-31")], ["2027-03-31", "2027-09-28"]),
        # An extra, unplanned revision far from any slot is simply added.
        ([final("2027-06-15")], ["2027-03-30", "2027-06-15", "2027-09-28"]),
        # A pending RC names the planned date of its slot.
        ([rc("2027-09-21", "2027-08-10")], ["2027-03-30", "2027-09-21"]),
    ],
)
def test_actual_releases_override_projections(releases, expected):
    got = projected_releases(Calendar(), releases, date(2027, 1, 1), date(2027, 12, 31))
    assert [d.isoformat() for d in got] == expected


def test_a_projection_in_the_past_that_no_release_took_did_not_happen():
    no_effective_date = Calendar(moved={}, effective_from=None)
    releases = [final("2026-07-28")]
    without_today = projected_releases(no_effective_date, releases, date(2026, 7, 1), date(2027, 6, 30))
    assert [d.isoformat() for d in without_today] == ["2026-07-28", "2026-09-29", "2027-03-30"]
    with_today = projected_releases(
        no_effective_date, releases, date(2026, 7, 1), date(2027, 6, 30), today=date(2026, 11, 29)
    )
    assert [d.isoformat() for d in with_today] == ["2026-07-28", "2027-03-30"]


def test_next_release_and_the_sdk_beta_window():
    today = date(2026, 11, 29)
    upcoming = next_release(Calendar(), [final("2026-07-28")], today, today=today)
    assert upcoming is not None and upcoming.date == date(2027, 3, 30) and not upcoming.actual
    assert beta_window(Calendar(), upcoming.date) == (date(2027, 2, 13), date(2027, 3, 30))  # 45 days before
    assert beta_window(Calendar(beta_lead_days=30), date(2027, 9, 28)) == (date(2027, 8, 29), date(2027, 9, 28))
    after_march = next_release(Calendar(), [final("2026-07-28")], date(2027, 3, 30), today=today)
    assert after_march is not None and after_march.date == date(2027, 9, 28)


@pytest.mark.parametrize(
    ("start", "months", "expected"),
    [
        ("2026-06-03", 3, "2026-09-03"),
        ("2026-07-28", 12, "2027-07-28"),
        ("2026-08-31", 1, "2026-09-30"),
        ("2027-11-30", 3, "2028-02-29"),
        ("2025-03-26", 18, "2026-09-26"),
    ],
)
def test_add_months(start, months, expected):
    assert add_months(date.fromisoformat(start), months) == date.fromisoformat(expected)


@pytest.mark.parametrize(
    ("moved", "message"),
    [({"2026-13": "2027-03"}, "'2026-13' is not a month"), ({"2026-12": "March 2027"}, "'March 2027' is not YYYY-MM")],
)
def test_a_bad_moved_release_is_a_config_error(moved, message):
    with pytest.raises(ConfigError, match=message):
        ReleaseCalendar.from_settings(Calendar(moved=moved))


def test_a_release_a_few_days_late_is_still_the_same_slot():
    releases = [final("2026-07-28")]
    late = projected_releases(Calendar(), releases, date(2027, 1, 1), date(2027, 12, 31), today=date(2027, 4, 2))
    assert [d.isoformat() for d in late] == ["2027-03-30", "2027-09-28"]  # late, not skipped
    out = [*releases, final("2027-03-30", "2027-04-06")]
    published = projected_releases(Calendar(), out, date(2027, 1, 1), date(2027, 12, 31), today=date(2027, 4, 7))
    assert [d.isoformat() for d in published] == ["2027-04-06", "2027-09-28"]
    gone = projected_releases(Calendar(), releases, date(2027, 1, 1), date(2027, 12, 31), today=date(2027, 5, 15))
    assert [d.isoformat() for d in gone] == ["2027-09-28"]  # six weeks without a release: it did not happen


def test_no_projection_before_the_calendar_took_effect():
    calendar = ReleaseCalendar(effective_from=date(2026, 10, 14))
    got = projected_releases(calendar, [final("2026-07-28")], date(2026, 7, 1), date(2027, 6, 30))
    assert [d.isoformat() for d in got] == ["2026-07-28", "2027-03-30"]  # no September 2026 projection
