"""Outbox delivery through the real slack-sdk client against the local Slack fake."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from tests.fakes.slack_server import FakeSlack
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.notify.delivery import ConsoleSink, WebApiSink, deliver_outbox, make_sink
from watcher.notify.settings import SlackCredentials, SlackSettings


def notice(key: str, channel: str = "#books-mcp", thread_of: str | None = None, files=None) -> Notice:
    return Notice(
        key=key,
        team="books",
        channel=channel,
        kind="release",
        text=f"text of {key}",
        blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": f"*{key}*"}}],
        thread_of=thread_of,
        files=files,
    )


def web_sink(slack: FakeSlack, store: Store, retries: int = 2) -> WebApiSink:
    settings = SlackSettings(api_url=slack.api_url, retries=retries, timeout_seconds=5)
    return WebApiSink(slack.token, settings, store)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "watcher.db")


def test_notice_is_posted_once_with_blocks_and_key_metadata(slack: FakeSlack, store: Store):
    assert store.enqueue(notice("release:python:2.4.0b1:books"))
    assert not store.enqueue(notice("release:python:2.4.0b1:books")), "same idempotency key queued twice"
    report = deliver_outbox(store, web_sink(slack, store))
    assert report.sent == ["release:python:2.4.0b1:books"]
    assert len(slack.messages) == 1
    message = slack.messages[0]
    assert message["channel"] == slack.channel_id("#books-mcp")
    assert message["blocks"][0]["text"]["text"] == "*release:python:2.4.0b1:books*"
    assert message["metadata"]["event_payload"]["key"] == "release:python:2.4.0b1:books"
    # A second pass has nothing left to send.
    assert deliver_outbox(store, web_sink(slack, store)).sent == []
    assert len(slack.messages) == 1
    assert store.outbox_row("release:python:2.4.0b1:books")["status"] == "sent"


def test_rate_limited_then_success_is_one_message(slack: FakeSlack, store: Store):
    slack.fail_next("chat.postMessage", status=429, retry_after=1)
    store.enqueue(notice("k1"))
    report = deliver_outbox(store, web_sink(slack, store))
    assert report.sent == ["k1"]
    assert slack.calls.count("chat.postMessage") == 2
    assert len(slack.messages) == 1


def test_slack_down_keeps_notice_queued_then_delivers_once(slack: FakeSlack, store: Store):
    slack.fail_next("chat.postMessage", status=503, times=50)
    store.enqueue(notice("k1"))
    report = deliver_outbox(store, web_sink(slack, store, retries=1))
    assert "k1" in report.retry_later
    row = store.outbox_row("k1")
    assert row["status"] == "queued" and "503" in row["last_error"]
    slack.heal()
    assert deliver_outbox(store, web_sink(slack, store)).sent == ["k1"]
    assert len(slack.messages) == 1


def test_channel_not_found_fails_that_notice_only(slack: FakeSlack, store: Store):
    store.enqueue(notice("bad", channel="#nowhere"))
    store.enqueue(notice("good"))
    report = deliver_outbox(store, web_sink(slack, store))
    assert report.failed == {"bad": "channel_not_found"}
    assert report.sent == ["good"]
    assert store.outbox_row("bad")["status"] == "failed"


def test_invalid_auth_pauses_delivery_and_loses_nothing(slack: FakeSlack, store: Store):
    store.enqueue(notice("a"))
    store.enqueue(notice("b"))
    wrong = WebApiSink("xoxb-wrong", SlackSettings(api_url=slack.api_url, retries=0), store)
    report = deliver_outbox(store, wrong)
    assert report.retry_later == {"a": "invalid_auth"}, "stops at the first auth error"
    assert {r["status"] for r in store.outbox()} == {"queued"}
    assert deliver_outbox(store, web_sink(slack, store)).sent == ["a", "b"]


def test_crash_between_send_and_mark_never_sends_twice(slack: FakeSlack, store: Store):
    store.enqueue(notice("k1"))
    row = store.outbox_row("k1")
    # The message reached Slack, then the process died before recording it.
    web_sink(slack, store).post({**row, "blocks": [], "files": []}, None, None)
    store.update_outbox(row["id"], status="sending", attempts=1)
    reopened = Store(store.path)
    report = deliver_outbox(reopened, web_sink(slack, reopened))
    assert report.sent == ["k1"]
    assert len(slack.messages) == 1
    assert reopened.outbox_row("k1")["slack_ts"] == slack.messages[0]["ts"]


def test_crash_before_send_still_delivers(slack: FakeSlack, store: Store):
    store.enqueue(notice("k1"))
    store.update_outbox(store.outbox_row("k1")["id"], status="sending", attempts=1)
    assert deliver_outbox(Store(store.path), web_sink(slack, store)).sent == ["k1"]
    assert len(slack.messages) == 1


def test_reply_waits_for_its_thread_then_threads(slack: FakeSlack, store: Store):
    store.enqueue(notice("run:library:2.4.0b1:books", thread_of="release:python:2.4.0b1:books"))
    store.enqueue(notice("release:python:2.4.0b1:books"))
    first = deliver_outbox(store, web_sink(slack, store))
    assert first.deferred == ["run:library:2.4.0b1:books"]
    second = deliver_outbox(store, web_sink(slack, store))
    assert second.sent == ["run:library:2.4.0b1:books"]
    parent, reply = slack.messages
    assert reply["thread_ts"] == parent["ts"] and parent["thread_ts"] is None


def test_files_are_uploaded_into_the_thread_once(slack: FakeSlack, store: Store, tmp_path: Path):
    picture = tmp_path / "timeline.png"
    picture.write_bytes(b"\x89PNG fake picture bytes")
    store.enqueue(notice("digest:books:2026-W48", files=[{"path": str(picture), "title": "Timeline"}]))
    slack.fail_next("files.completeUploadExternal", status=503, times=10)
    first = deliver_outbox(store, web_sink(slack, store, retries=0))
    assert "digest:books:2026-W48" in first.retry_later
    assert store.outbox_row("digest:books:2026-W48")["status"] == "posted"
    slack.heal()
    assert deliver_outbox(store, web_sink(slack, store)).sent == ["digest:books:2026-W48"]
    assert len(slack.messages) == 1, "the message is not posted again for a failed upload"
    assert len(slack.files) == 1 and slack.files[0]["content"] == picture.read_bytes()
    assert slack.files[0]["thread_ts"] == slack.messages[0]["ts"]


def test_webhook_sink_posts_and_retries(slack: FakeSlack, store: Store):
    store.enqueue(notice("k1"))
    slack.fail_next("webhook", status=429, retry_after=0)
    sink = make_sink(SlackCredentials(webhook_url=slack.webhook_url), SlackSettings(retries=2), store)
    assert deliver_outbox(store, sink).sent == ["k1"]
    assert slack.webhook_posts[0]["text"] == "text of k1"


def test_no_credentials_prints_to_console_and_records_it(store: Store):
    stream = io.StringIO()
    store.enqueue(notice("k1"))
    sink = make_sink(SlackCredentials(), SlackSettings(), store, stream)
    assert isinstance(sink, ConsoleSink)
    assert deliver_outbox(store, sink).sent == ["k1"]
    assert "text of k1" in stream.getvalue() and "#books-mcp" in stream.getvalue()
    assert store.outbox_row("k1")["status"] == "console"


def test_token_never_reaches_the_logs(slack: FakeSlack, store: Store, caplog: pytest.LogCaptureFixture):
    from watcher.core.logs import RedactingFilter

    caplog.handler.addFilter(RedactingFilter())
    caplog.set_level(logging.DEBUG)
    store.enqueue(notice("k1"))
    deliver_outbox(store, web_sink(slack, store))
    wrong = WebApiSink("xoxb-wrong-but-secret", SlackSettings(api_url=slack.api_url, retries=0), store)
    store.enqueue(notice("k2"))
    deliver_outbox(store, wrong)
    assert caplog.records, "debug logging produced nothing to check"
    assert slack.token not in caplog.text
    assert "xoxb-wrong-but-secret" not in caplog.text
