"""Classes 5 and 7: a send whose outcome is unknown is looked up by its key before any retry, a read
timeout does not crash the CLI, and a long Retry-After is not waited for."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fakes.slack_server import FakeSlack, wait_for
from tests.notify.test_delivery import notice
from tests.reliability.conftest import python_only
from watcher.cli import main
from watcher.core.store import Store
from watcher.notify.delivery import WebApiSink, deliver_outbox
from watcher.notify.settings import SlackSettings


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "watcher.db")


def sink(slack: FakeSlack, store: Store, **settings: object) -> WebApiSink:
    values = {"api_url": slack.api_url, "retries": 3, "timeout_seconds": 5, **settings}
    return WebApiSink(slack.token, SlackSettings(**values), store)


def keys(slack: FakeSlack) -> list[str]:
    return [m["metadata"]["event_payload"]["key"] for m in slack.messages]


def test_stored_then_5xx_is_one_message(slack: FakeSlack, store: Store):
    slack.fail_next("chat.postMessage", status=503, store_first=True, times=3)
    store.enqueue(notice("k1"))
    report = deliver_outbox(store, sink(slack, store))
    assert report.sent == ["k1"] and keys(slack) == ["k1"]
    assert slack.calls.count("chat.postMessage") == 1, "a 5xx post is never retried blindly"
    assert deliver_outbox(store, sink(slack, store)).sent == []
    assert keys(slack) == ["k1"]


def test_failed_lookup_keeps_the_outcome_unknown_until_one_answers(slack: FakeSlack, store: Store):
    slack.fail_next("chat.postMessage", status=500, store_first=True)
    slack.fail_next("conversations.history", status=503, times=100)
    store.enqueue(notice("k1"))
    for _ in range(3):
        report = deliver_outbox(store, sink(slack, store, retries=0))
        assert "k1" in report.retry_later
        row = store.outbox_row("k1")
        assert row["status"] == "sending" and "lookup by key failed" in row["last_error"]
    assert slack.calls.count("chat.postMessage") == 1, "no second post while the lookup fails"
    slack.heal()
    assert deliver_outbox(store, sink(slack, store)).sent == ["k1"]
    assert keys(slack) == ["k1"]


def test_lookup_that_finds_nothing_allows_one_retry(slack: FakeSlack, store: Store):
    slack.fail_next("chat.postMessage", status=503)  # not stored
    store.enqueue(notice("k1"))
    deliver_outbox(store, sink(slack, store))
    assert store.outbox_row("k1")["status"] == "queued"
    assert deliver_outbox(store, sink(slack, store)).sent == ["k1"]
    assert keys(slack) == ["k1"]


def test_read_timeout_does_not_crash_the_cli_and_is_not_posted_twice(
    registry, history, slack: FakeSlack, write_config, capsys, monkeypatch
):
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    config = write_config(python_only(registry, {"api_url": slack.api_url, "timeout_seconds": 1}))
    history.before("2.0.0rc1")
    assert main(["--config", str(config), "poll"]) == 0
    history.before("2.0.0")
    slack.slow_next("chat.postMessage", seconds=2.5)
    assert main(["--config", str(config), "poll"]) == 0, "a Slack read timeout is a result, not a traceback"
    assert "1 to retry" in capsys.readouterr().err
    store = Store(Path(config).parent / "state" / "watcher.db")
    row = store.outbox_row("release:python:2.0.0rc1:books")
    assert row["status"] == "sending" and "no answer from Slack in time" in row["last_error"]
    assert wait_for(lambda: len(slack.messages) == 1), "the fake stores it after the pause"
    deliver_outbox(store, sink(slack, store))  # the next pass: lookup by key finds it
    assert store.outbox_row("release:python:2.0.0rc1:books")["status"] == "sent"
    assert keys(slack) == ["release:python:2.0.0rc1:books"]


def test_long_retry_after_is_not_waited_for(slack: FakeSlack, store: Store):
    slack.fail_next("chat.postMessage", status=429, retry_after=60)
    store.enqueue(notice("k1"))
    store.enqueue(notice("k2"))
    started = time.monotonic()
    report = deliver_outbox(store, sink(slack, store, max_retry_after_seconds=2))
    assert time.monotonic() - started < 10, "a 60 s Retry-After must not block the pass"
    assert "k1" in report.retry_later and report.sent == []
    assert slack.calls.count("chat.postMessage") == 1, "the pass stops at the rate limit"
    assert store.outbox_row("k1")["status"] == "queued" and "rate limited" in store.outbox_row("k1")["last_error"]
    assert deliver_outbox(store, sink(slack, store)).sent == ["k1", "k2"]


def test_short_retry_after_is_honoured_within_the_cap(slack: FakeSlack, store: Store):
    slack.fail_next("chat.postMessage", status=429, retry_after=1)
    store.enqueue(notice("k1"))
    assert deliver_outbox(store, sink(slack, store, max_retry_after_seconds=2)).sent == ["k1"]
    assert slack.calls.count("chat.postMessage") == 2 and keys(slack) == ["k1"]
