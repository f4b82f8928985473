"""The Store's typed queries: versions, polls, runs and the outbox backlog, read back from a real SQLite file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from watcher.core.store import Store
from watcher.core.store_schema import Notice, OutboxBacklog, PollCount, VerdictFigures, VersionRow

T0 = datetime(2026, 2, 28, 10, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "watcher.db")


def version(number: str, *, baseline: bool, yanked: bool = False) -> VersionRow:
    return VersionRow(
        sdk="python",
        registry="pypi",
        package="mcp",
        version=number,
        prerelease=int("b" in number),
        yanked=int(yanked),
        published="2026-02-01T00:00:00Z",
        first_seen="2026-02-02T00:00:00Z",
        baseline=int(baseline),
    )


def test_versions_are_added_yanked_and_counted_after_the_baseline(store: Store) -> None:
    store.add_version(version("1.0.0", baseline=True))
    store.add_version(version("2.0.0b1", baseline=False))
    store.add_version(version("2.0.0b2", baseline=False))
    store.set_yanked("python", "mcp", "2.0.0b1", True)

    rows = {row["version"]: row for row in store.versions_of("python")}
    assert rows["2.0.0b1"]["yanked"] == 1 and rows["2.0.0b2"]["yanked"] == 0
    assert store.known_versions("python", "mcp") == {"1.0.0", "2.0.0b1", "2.0.0b2"}
    assert store.new_version_counts() == {"python": 2}


def test_polls_give_the_latest_per_source_the_last_success_and_counts(store: Store) -> None:
    store.record_poll("python", "sdk", T0, True, None, finished=T0 + timedelta(seconds=2), requests=3, new=1)
    store.record_poll("python", "sdk", T0 + timedelta(hours=1), False, "HTTP 503", finished=T0 + timedelta(hours=1))
    store.record_poll("spec", "spec", T0, True, None, finished=T0 + timedelta(minutes=5))

    latest = {row["source"]: row for row in store.last_polls()}
    assert latest["python"]["ok"] == 0 and latest["python"]["error"] == "HTTP 503"
    assert latest["spec"]["finished"] == "2026-02-28T10:05:00Z"
    assert store.last_successful_poll("sdk") == T0 + timedelta(seconds=2)
    assert store.last_successful_poll("nothing-of-this-kind") is None
    assert store.last_successful_polls() == {"python": T0 + timedelta(seconds=2), "spec": T0 + timedelta(minutes=5)}
    assert sorted(store.poll_counts(), key=lambda c: (c.source, c.ok)) == [
        PollCount("python", False, 1),
        PollCount("python", True, 1),
        PollCount("spec", True, 1),
    ]


def test_run_figures_count_queued_runs_and_sum_finished_ones(store: Store) -> None:
    for version_number in ("2.0.0b1", "2.0.0b2", "2.0.0b3"):
        store.queue_run("library", "python", version_number, "poll")
    first, second = store.claim_run(), store.claim_run()
    assert first is not None and second is not None
    store.finish_run(first["id"], "pass", {"verdict": "pass"}, 12.5)
    store.finish_run(second["id"], "fail", {"verdict": "fail"}, 3.0)

    assert store.count_runs("queued") == 1 and store.count_runs("running") == 0
    assert sorted(store.finished_run_figures(), key=lambda f: str(f.verdict)) == [
        VerdictFigures("fail", runs=1, seconds=3.0),
        VerdictFigures("pass", runs=1, seconds=12.5),
    ]
    assert store.runs(status="done", server="library", limit=1)[0]["report"] == {"verdict": "fail"}


def test_outbox_backlog_counts_pending_and_failed_notices(store: Store) -> None:
    assert store.outbox_backlog() == OutboxBacklog(pending=0, oldest_pending=None, failed=0)
    for key in ("a", "b", "c"):
        store.enqueue(Notice(key=key, team="books", channel="#books", kind="release", text=key, blocks=[]))
    rows = {row["key"]: row for row in store.outbox()}
    store.update_outbox(rows["b"]["id"], status="failed", last_error="channel_not_found")
    store.update_outbox(rows["c"]["id"], status="sent")

    backlog = store.outbox_backlog()
    assert (backlog.pending, backlog.failed) == (1, 1)
    assert backlog.oldest_pending is not None and backlog.oldest_pending.isoformat() == rows["a"]["created"].replace(
        "Z", "+00:00"
    )


def test_threads_sharing_the_store_never_trip_over_each_others_transactions(tmp_path: Path) -> None:
    # Two poll jobs write in transactions while others read (the calendar-aware polling runs two poll jobs);
    # sqlite-utils opens a savepoint for every read, so an unlocked read once broke a writer's BEGIN.
    import threading
    from datetime import UTC, datetime

    from watcher.core.store_schema import VersionRow

    store = Store(tmp_path / "state.db")
    errors: list[str] = []

    def writer(source: str) -> None:
        try:
            for number in range(150):
                with store.transaction():
                    store.add_version(
                        VersionRow(
                            sdk=source,
                            registry="pypi",
                            package="mcp",
                            version=f"1.{number}.0",
                            prerelease=0,
                            yanked=0,
                            published=None,
                            first_seen="2026-12-03T12:00:00Z",
                            baseline=1,
                        )
                    )
                    store.record_poll(source, "sdk", datetime(2026, 12, 3, 12, tzinfo=UTC), True, None)
        except Exception as exc:  # collected: the assertion below names it
            errors.append(repr(exc))

    def reader() -> None:
        try:
            for _ in range(600):
                store.get_kv("anything")
                store.last_polls()
                store.known_versions("a", "mcp")
        except Exception as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=writer, args=(s,)) for s in ("a", "b")]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert len(store.known_versions("a", "mcp")) == 150 and len(store.known_versions("b", "mcp")) == 150
