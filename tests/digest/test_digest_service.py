"""Scheduling: the digest time per ISO week, the misfire case, once per team and week, the cron job."""

from __future__ import annotations

import logging
import os
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from apscheduler.schedulers.background import BackgroundScheduler
from PIL import Image

from tests.digest.helpers import FixedState, big_registry, build_state
from watcher.core.errors import ConfigError
from watcher.digest.schedule import (
    digest_trigger,
    due_time,
    pictures_dir,
    queue_digest,
    register_digest_job,
    send_due_digests,
)
from watcher.digest.settings import DigestSettings


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def digests(state: FixedState) -> list[dict]:
    return [row for row in state.store.outbox() if row["kind"] == "digest"]


@pytest.fixture
def state(tmp_path: Path) -> FixedState:
    return build_state(tmp_path)


@pytest.mark.parametrize(
    ("settings", "now", "due"),
    [
        (DigestSettings(), "2026-11-30T08:59:59+00:00", None),
        (DigestSettings(), "2026-11-30T09:00:00+00:00", "2026-11-30T09:00:00+00:00"),
        (DigestSettings(), "2026-12-06T23:59:00+00:00", "2026-11-30T09:00:00+00:00"),
        (DigestSettings(), "2026-11-29T23:00:00+00:00", "2026-11-23T09:00:00+00:00"),
        # 09:00 in Berlin is 08:00 UTC in winter; the ISO week is Berlin's.
        (DigestSettings(timezone="Europe/Berlin"), "2026-11-30T08:00:00+00:00", "2026-11-30T08:00:00+00:00"),
        (DigestSettings(timezone="Europe/Berlin"), "2026-11-30T07:59:00+00:00", None),
        (DigestSettings(timezone="Pacific/Auckland"), "2026-11-29T20:00:00+00:00", "2026-11-29T20:00:00+00:00"),
        (DigestSettings(day_of_week="fri", hour=17, minute=30), "2026-12-03T12:00:00+00:00", None),
        (
            DigestSettings(day_of_week="fri", hour=17, minute=30),
            "2026-12-04T17:30:00+00:00",
            "2026-12-04T17:30:00+00:00",
        ),
    ],
)
def test_this_weeks_digest_time(settings: DigestSettings, now: str, due: str | None):
    found = due_time(settings, at(now))
    assert (found.astimezone(UTC) if found else None) == (at(due) if due else None)


def test_a_bad_digest_day_or_zone_is_a_configuration_error():
    with pytest.raises(ConfigError, match="funday"):
        digest_trigger(DigestSettings(day_of_week="funday"))
    with pytest.raises(ConfigError, match="Mars/Base"):
        digest_trigger(DigestSettings(timezone="Mars/Base"))


def test_down_across_the_digest_time_sends_exactly_one_digest_when_back(state: FixedState):
    # Nothing before Monday 09:00.
    assert send_due_digests(state.loaded, state.store, at("2026-11-30T08:30:00+00:00")) == []
    assert digests(state) == []
    # The service was down from Sunday to Monday afternoon; it runs the check when it is back.
    assert send_due_digests(state.loaded, state.store, at("2026-11-30T14:30:00+00:00")) == ["digest:books:2026-W49"]
    # Later runs the same week (the cron firing late, a restart, another catch-up) find it queued.
    for later in ("2026-11-30T14:31:00+00:00", "2026-12-01T09:00:00+00:00", "2026-12-02T10:00:00+00:00"):
        assert send_due_digests(state.loaded, state.store, at(later)) == []
    rows = digests(state)
    assert [(r["key"], r["team"], r["thread_of"]) for r in rows] == [("digest:books:2026-W49", "books", None)]
    (picture,) = rows[0]["files"]
    assert Image.open(picture["path"]).size[0] == 1200
    assert picture["filename"] == "deprecation-timeline-books-2026-W49.png"
    assert rows[0]["channel"] == "#books-mcp" and rows[0]["blocks"][0]["type"] == "header"
    # The team with digest: false gets none. The next week gets its own.
    assert send_due_digests(state.loaded, state.store, at("2026-12-07T09:05:00+00:00")) == ["digest:books:2026-W50"]


def test_beyond_the_misfire_grace_the_week_is_skipped_and_said_so(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    state = build_state(tmp_path, misfire_grace_hours=24)
    caplog.set_level(logging.WARNING)
    assert send_due_digests(state.loaded, state.store, at("2026-12-01T09:30:00+00:00")) == []
    assert digests(state) == []
    assert "beyond digest.misfire_grace_hours" in caplog.text
    assert send_due_digests(state.loaded, state.store, at("2026-12-01T08:30:00+00:00")) == ["digest:books:2026-W49"], (
        "23.5 hours late is within the grace"
    )


def test_a_second_send_in_the_same_week_does_nothing_and_force_sends_again(state: FixedState):
    team = state.loaded.config.team("books")
    now = at("2026-11-30T10:00:00+00:00")
    first = queue_digest(state.loaded, state.store, team, now)
    assert first is not None and first.key == "digest:books:2026-W49"
    before = state.store.outbox()
    assert queue_digest(state.loaded, state.store, team, now + timedelta(hours=3)) is None
    assert send_due_digests(state.loaded, state.store, now + timedelta(hours=4)) == []
    assert state.store.outbox() == before
    forced = queue_digest(state.loaded, state.store, team, now + timedelta(hours=5), force=True)
    assert forced is not None and forced.key == "digest:books:2026-W49:forced-20261130T150000Z"
    assert len(digests(state)) == 2


def test_a_long_digest_is_queued_as_a_parent_and_replies_in_its_thread(tmp_path: Path):
    state = build_state(tmp_path, registry=big_registry(70, "Use the new API."), extra_servers=30)
    queued = queue_digest(state.loaded, state.store, state.loaded.config.team("books"), at("2026-11-30T09:00:00+00:00"))
    assert queued is not None and len(queued.keys) >= 3
    rows = digests(state)
    assert [r["key"] for r in rows] == queued.keys
    parent, *replies = rows
    assert parent["thread_of"] is None and parent["files"]
    assert [r["key"] for r in replies] == [f"digest:books:2026-W49:part{n}" for n in range(2, len(rows) + 1)]
    assert all(r["thread_of"] == parent["key"] and r["files"] == [] for r in replies)
    assert all(len(r["blocks"]) <= 50 for r in rows)


def test_the_cron_job_and_the_catch_up_run_at_start():
    settings = DigestSettings(day_of_week="mon", hour=9, minute=0, timezone="Europe/Berlin", misfire_grace_hours=48)
    ran = threading.Event()
    scheduler = BackgroundScheduler(timezone="UTC")
    job = register_digest_job(scheduler, settings, ran.set)
    assert job.id == "digest" and job.coalesce is True and job.max_instances == 1
    assert job.misfire_grace_time == 48 * 3600
    monday_9_berlin = job.trigger.get_next_fire_time(None, at("2026-11-28T12:00:00+00:00"))
    assert monday_9_berlin.astimezone(UTC) == at("2026-11-30T08:00:00+00:00")
    assert {j.id for j in scheduler.get_jobs()} == {"digest", "digest-catch-up"}
    scheduler.start()
    try:
        assert ran.wait(10), "the catch-up job runs once at start"
        assert {j.id for j in scheduler.get_jobs()} == {"digest"}, "the one-shot catch-up is gone after it ran"
    finally:
        scheduler.shutdown(wait=True)


def test_old_pictures_are_pruned_from_the_state_folder(state: FixedState):
    folder = pictures_dir(state.loaded)
    folder.mkdir(parents=True, exist_ok=True)
    old, recent = folder / "digest_books_2026-W30.png", folder / "digest_books_2026-W45.png"
    for path, when in ((old, "2026-07-20T09:00:00+00:00"), (recent, "2026-11-02T09:00:00+00:00")):
        path.write_bytes(b"\x89PNG old picture")
        os.utime(path, (at(when).timestamp(), at(when).timestamp()))
    queued = queue_digest(state.loaded, state.store, state.loaded.config.team("books"), at("2026-11-30T09:00:00+00:00"))
    assert queued is not None
    assert not old.exists() and recent.exists() and queued.picture.exists()


def test_old_timeline_pictures_are_pruned_by_their_week_not_by_file_times(tmp_path):
    import os

    from watcher.digest.schedule import prune_pictures

    names = [
        "digest_books_2026-W49.png",  # this week: kept
        "digest_books_2026-W37.png",  # 12 weeks back: kept
        "digest_books_2026-W35.png",  # 14 weeks back: pruned
        "digest_books_2026-W10_forced-20260305T090000Z.png",  # a forced one, long ago: pruned
        "digest_notes.png",  # not named by the digest: left alone
    ]
    for name in names:
        (tmp_path / name).write_bytes(b"\x89PNG")
        os.utime(tmp_path / name, (0, 0))  # file times from 1970 must not matter
    just_queued = tmp_path / "digest_books_2026-W10_forced-20260305T090000Z.png"
    removed = prune_pictures(tmp_path, at("2026-12-03T12:00:00+00:00"), keep=just_queued)
    assert [p.name for p in removed] == ["digest_books_2026-W35.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "digest_books_2026-W10_forced-20260305T090000Z.png",  # the one just queued stays, however old its week
        "digest_books_2026-W37.png",
        "digest_books_2026-W49.png",
        "digest_notes.png",
    ]
