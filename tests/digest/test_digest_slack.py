"""The digest through the real slack-sdk against the local Slack fake, file upload included; the CLI too."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.digest.helpers import FixedState, big_registry, build_state, cli
from tests.fakes.slack_server import FakeSlack
from watcher.digest.schedule import send_due_digests
from watcher.notify.delivery import WebApiSink, deliver_outbox
from watcher.notify.settings import SlackSettings

MONDAY_NOON = datetime.fromisoformat("2026-11-30T12:00:00+00:00")


def sink(slack: FakeSlack, state: FixedState) -> WebApiSink:
    return WebApiSink(slack.token, SlackSettings(api_url=slack.api_url, retries=1, timeout_seconds=5), state.store)


def test_digest_and_picture_reach_slack_once(slack: FakeSlack, tmp_path: Path):
    state = build_state(tmp_path)
    assert send_due_digests(state.loaded, state.store, MONDAY_NOON) == ["digest:books:2026-W49"]
    report = deliver_outbox(state.store, sink(slack, state))
    assert "digest:books:2026-W49" in report.sent and report.failed == {}

    (message,) = [m for m in slack.messages if m["metadata"]["event_payload"]["key"] == "digest:books:2026-W49"]
    row = state.store.outbox_row("digest:books:2026-W49")
    assert message["channel"] == slack.channel_id("#books-mcp") and message["thread_ts"] is None
    assert message["blocks"][0]["text"]["text"] == "Deprecation digest · books · 2026-W49"
    assert message["text"].startswith("Deprecation digest · books · 2026-W49: 2026-11-30 · 5 deprecated features")
    assert row["status"] == "sent" and row["slack_ts"] == message["ts"]

    # files_upload_v2: get an upload URL, send the bytes, complete the upload into the message's thread.
    calls = slack.calls
    assert calls.index("files.getUploadURLExternal") < calls.index("files.completeUploadExternal")
    (uploaded,) = slack.files
    (stored,) = next(r for r in state.store.outbox() if r["key"] == "digest:books:2026-W49")["files"]
    assert uploaded["content"] == Path(stored["path"]).read_bytes() and uploaded["content"].startswith(b"\x89PNG")
    assert uploaded["filename"] == "deprecation-timeline-books-2026-W49.png"
    assert uploaded["title"] == "Deprecation timeline · books · 2026-W49"
    assert uploaded["thread_ts"] == message["ts"] and uploaded["channel"] == message["channel"]

    # The same week again: nothing new reaches Slack.
    assert send_due_digests(state.loaded, state.store, MONDAY_NOON.replace(hour=15)) == []
    assert deliver_outbox(state.store, sink(slack, state)).sent == []
    assert len([m for m in slack.messages if m["metadata"]["event_payload"]["key"].startswith("digest:")]) == 1
    assert len(slack.files) == 1


def test_a_long_digest_arrives_as_one_thread_in_order(slack: FakeSlack, tmp_path: Path):
    state = build_state(tmp_path, registry=big_registry(70, "Use the new API."), extra_servers=30)
    assert send_due_digests(state.loaded, state.store, MONDAY_NOON) == ["digest:books:2026-W49"]
    deliver_outbox(state.store, sink(slack, state))
    digest_messages = [m for m in slack.messages if m["metadata"]["event_payload"]["key"].startswith("digest:")]
    parent, *replies = digest_messages
    assert len(replies) >= 2
    assert parent["thread_ts"] is None and all(r["thread_ts"] == parent["ts"] for r in replies)
    keys = [m["metadata"]["event_payload"]["key"] for m in replies]
    assert keys == [f"digest:books:2026-W49:part{n}" for n in range(2, len(replies) + 2)]
    assert all(len(m["blocks"]) <= 50 for m in digest_messages)
    assert slack.files[0]["thread_ts"] == parent["ts"]
    assert {row["status"] for row in state.store.outbox() if row["kind"] == "digest"} == {"sent"}


def test_cli_send_once_per_week_then_force(
    slack: FakeSlack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    state = build_state(tmp_path, slack_api_url=slack.api_url)
    monkeypatch.chdir(tmp_path)  # the config's relative paths (snapshots) resolve against the working folder
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    config = str(state.loaded.path)

    assert cli(["--config", config, "digest", "--send", "--today", "2026-11-30"]) == 0
    out = capsys.readouterr().out
    assert "books: queued digest:books:2026-W49 (1 message(s)" in out
    digest_posts = lambda: [m for m in slack.messages if m["metadata"]["event_payload"]["key"].startswith("digest:")]  # noqa: E731
    assert len(digest_posts()) == 1 and len(slack.files) == 1

    assert cli(["--config", config, "digest", "--send", "--today", "2026-11-30"]) == 0
    assert "the digest for 2026-W49 was already queued (--force sends it again)" in capsys.readouterr().out
    assert len(digest_posts()) == 1 and len(slack.files) == 1

    assert cli(["--config", config, "digest", "--send", "--force", "--today", "2026-11-30"]) == 0
    assert "queued digest:books:2026-W49:forced-" in capsys.readouterr().out
    assert len(digest_posts()) == 2 and len(slack.files) == 2
    assert "infra" not in {m["channel"] for m in digest_posts()}, "digest: false"


def test_cli_send_reports_what_slack_refused(
    slack: FakeSlack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    state = build_state(tmp_path, slack_api_url=slack.api_url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    slack.fail_next("chat.postMessage", error="not_in_channel")
    assert cli(["--config", str(state.loaded.path), "digest", "--send", "--today", "2026-11-30"]) == 3
    assert "not delivered: digest:books:2026-W49: failed (not_in_channel)" in capsys.readouterr().out


def test_cli_send_without_credentials_prints_to_the_console(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    state = build_state(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert cli(["--config", str(state.loaded.path), "digest", "--send", "--today", "2026-11-30"]) == 0
    out = capsys.readouterr().out
    assert "--- notice for books → #books-mcp [digest:books:2026-W49]" in out
    picture = tmp_path / "state" / "digests" / "digest_books_2026-W49.png"
    assert f"    file: {picture}" in out and picture.read_bytes().startswith(b"\x89PNG")
    assert state.store.outbox_row("digest:books:2026-W49")["status"] == "console"
