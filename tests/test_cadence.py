"""Calendar-aware polling: the budget arithmetic, the decision across a window boundary, the job's re-planning."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from tests.suites.helpers import library_server, write_config
from watcher.config import WatcherConfig, parse_config
from watcher.core.errors import ConfigError
from watcher.core.store import Store
from watcher.polling.cadence import DAY_MINUTES, decide, next_poll, plan_budget, simulate_requests, window_sources
from watcher.service import Service
from watcher.spec.calendar import ReleaseCalendar
from watcher.spec.revisions import SpecRevision

CALENDAR = ReleaseCalendar()  # March and September, the Dec 2026 release moved to March 2027, 45-day lead
WINDOW_OPENS = datetime(2027, 2, 13, tzinfo=UTC)  # 45 days before Tuesday 2027-03-30
WINDOW_CLOSES = datetime(2027, 3, 31, tzinfo=UTC)


def shipped_like(**schedule: object) -> WatcherConfig:
    """17 sources as the shipped config has, two of them with servers built on them."""
    sdks = [{"name": f"sdk{i}", "registry": "npm", "package": f"p{i}"} for i in range(15)]
    sdks += [
        {"name": "python", "registry": "pypi", "package": "mcp"},
        {"name": "ts", "registry": "npm", "package": "s"},
    ]
    servers = [
        {**library_server(name=f"s-{sdk}", sdk=sdk, language="python"), "team": "books"} for sdk in ("python", "ts")
    ]
    return WatcherConfig.model_validate(
        {
            "sdks": sdks,
            "teams": [{"name": "books", "slack_channel": "#b"}],
            "servers": servers,
            "schedule": schedule,
        }
    )


def test_the_default_budget_keeps_the_yearly_average_within_todays_requests():
    budget = plan_budget(shipped_like())
    assert budget.window_sources == ("python", "ts")
    assert budget.window_minutes == 5
    assert budget.budget_per_day == 17 * DAY_MINUTES / 30 == 816
    # O >= 1440 (n - k f) / (n b - k f W), rounded up to whole minutes.
    f = 46 * 2 / 365
    exact = DAY_MINUTES * (17 - 2 * f) / (816 - 2 * f * 288)
    assert budget.outside_minutes == pytest.approx(-(-exact // 1))
    assert budget.average_per_day <= budget.budget_per_day
    assert budget.requests_per_day(True) == 2 * 288 + 15 * DAY_MINUTES / budget.outside_minutes


def test_a_simulated_year_stays_within_the_budget_and_peaks_inside_the_windows():
    budget = plan_budget(shipped_like())
    per_day = simulate_requests(budget, CALENDAR, [], datetime(2027, 1, 1, tzinfo=UTC), 365)
    assert sum(per_day) / 365 <= budget.budget_per_day
    window_day = (date(2027, 3, 1) - date(2027, 1, 1)).days
    quiet_day = (date(2027, 5, 1) - date(2027, 1, 1)).days
    assert per_day[window_day] == pytest.approx(budget.requests_per_day(True), abs=40)
    assert per_day[quiet_day] == pytest.approx(budget.requests_per_day(False), abs=40)


def test_too_many_window_sources_stretch_the_window_cadence_not_the_budget():
    names = [f"sdk{i}" for i in range(15)] + ["python", "ts"]
    budget = plan_budget(shipped_like(window_sdks=names))
    assert budget.stretched and budget.window_minutes is not None and budget.window_minutes > 5
    assert budget.average_per_day <= budget.budget_per_day * 1.01  # whole minutes: within rounding


def test_calendar_aware_polling_is_off_when_it_cannot_help():
    assert not plan_budget(shipped_like(window_poll_minutes=None)).enabled
    flat = plan_budget(shipped_like(poll_minutes=2))  # already faster than the window cadence
    assert not flat.enabled and flat.outside_minutes == 2
    assert decide(flat, CALENDAR, [], WINDOW_OPENS).window_interval == 2


def test_an_unknown_window_sdk_is_a_config_error_with_its_line():
    with pytest.raises(ConfigError, match=r"c.yaml:5: schedule.window_sdks.0: unknown SDK 'nope'"):
        parse_config(
            "sdks:\n  - {name: python, registry: pypi, package: mcp}\nschedule:\n  window_sdks:\n    - nope\n", "c.yaml"
        )
    assert window_sources(shipped_like(window_sdks=["sdk3"])) == ("sdk3",)


def test_the_decision_across_the_window_boundary():
    budget = plan_budget(shipped_like())
    before = decide(budget, CALENDAR, [], WINDOW_OPENS - timedelta(seconds=1))
    assert not before.in_window
    assert before.window_interval == before.other_interval == budget.outside_minutes
    assert before.next_change == WINDOW_OPENS
    assert "next window opens 2027-02-13" in before.reason and "2027-03-30" in before.reason
    # One interval on would be later than the window's opening: the next poll is at the opening.
    assert next_poll(before, WINDOW_OPENS - timedelta(minutes=10)) == WINDOW_OPENS

    inside = decide(budget, CALENDAR, [], WINDOW_OPENS)
    assert inside.in_window and inside.window_interval == 5
    assert inside.other_interval == budget.outside_minutes
    assert inside.next_change == WINDOW_CLOSES
    assert "python, ts every 5 min" in inside.reason
    assert next_poll(inside, WINDOW_OPENS) == WINDOW_OPENS + timedelta(minutes=5)

    last = decide(budget, CALENDAR, [], WINDOW_CLOSES - timedelta(minutes=2))
    assert last.in_window and next_poll(last, WINDOW_CLOSES - timedelta(minutes=2)) == WINDOW_CLOSES
    after = decide(budget, CALENDAR, [], WINDOW_CLOSES)
    assert not after.in_window and after.release is not None and after.release.date == date(2027, 9, 28)


def test_an_actual_release_moves_the_window():
    budget = plan_budget(shipped_like())
    early = [SpecRevision(revision="2027-03-09", tag="2027-03-09", released=date(2027, 3, 9), prerelease=False)]
    cadence = decide(budget, CALENDAR, early, datetime(2027, 1, 24, tzinfo=UTC))
    assert cadence.in_window and cadence.release is not None and cadence.release.actual


def test_the_poll_job_replans_its_next_run_when_the_window_opens(tmp_path: Path):
    loaded = write_config(tmp_path, [library_server(path="/nonexistent/library")], tmp_path / "envs")
    service = Service(loaded, Store(tmp_path / "state.db"))
    outside = service.budget.outside_minutes
    assert service.budget.window_sources == ("python",) and outside > 30
    scheduler = service.scheduler()
    scheduler.start(paused=True)  # jobs get run times but none runs
    try:
        cadence = service.replan_window_polls(now=WINDOW_OPENS - timedelta(minutes=10))
        job = scheduler.get_job("poll_window_sdks")
        assert not cadence.in_window and job.trigger.interval == timedelta(minutes=outside)
        assert abs(job.next_run_time - datetime.now(UTC) - timedelta(minutes=10)) < timedelta(seconds=5)

        cadence = service.replan_window_polls(now=WINDOW_OPENS)
        job = scheduler.get_job("poll_window_sdks")
        assert cadence.in_window and job.trigger.interval == timedelta(minutes=5)
        assert abs(job.next_run_time - datetime.now(UTC) - timedelta(minutes=5)) < timedelta(seconds=5)

        cadence = service.replan_window_polls(now=WINDOW_CLOSES - timedelta(minutes=1))
        job = scheduler.get_job("poll_window_sdks")
        assert abs(job.next_run_time - datetime.now(UTC) - timedelta(minutes=1)) < timedelta(seconds=5)
        # The other sources keep one fixed interval.
        assert scheduler.get_job("poll_sdks").trigger.interval == timedelta(minutes=outside)
    finally:
        scheduler.shutdown(wait=False)


def test_status_shows_the_cadence_and_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from watcher.core import clock
    from watcher.ops.status import collect_status, render_status

    loaded = write_config(tmp_path, [library_server(path="/nonexistent/library")], tmp_path / "envs")
    store = Store(tmp_path / "state.db")
    monkeypatch.setattr(clock, "now", lambda: WINDOW_OPENS + timedelta(hours=1))
    status = collect_status(loaded, store)
    assert status["polling"]["now"]["in_window"] is True
    text = render_status(status)
    assert "POLLING" in text
    assert "inside the beta window of the spec release projected for 2027-03-30" in text
    assert "python every 5 min" in text
    monkeypatch.setattr(clock, "now", lambda: WINDOW_OPENS - timedelta(days=1))
    text = render_status(collect_status(loaded, store))
    assert "outside beta windows" in text and "re-plans at 2027-02-13T00:00:00Z" in text
