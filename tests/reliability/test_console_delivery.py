"""Class 1: a configured Slack token that is not set must not silently turn Slack off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.slack_server import FakeSlack
from tests.reliability.conftest import python_only
from watcher.cli import main
from watcher.core.store import Store
from watcher.core.timefmt import utcnow
from watcher.notify.destination import describe_destination
from watcher.notify.settings import SlackCredentials, SlackSettings
from watcher.ops.health import Readiness, build_app


def state_of(config: Path) -> Store:
    return Store(config.parent / "state" / "watcher.db")


def test_unset_token_variable_is_loud_recorded_and_resent_once(
    registry, history, slack: FakeSlack, write_config, capsys, monkeypatch
):
    config = write_config(python_only(registry, {"token_env": "MY_SLACK_TOKEN", "api_url": slack.api_url}))
    history.before("2.0.0rc1")
    assert main(["--config", str(config), "poll"]) == 0  # baseline
    history.before("2.0.0")
    capsys.readouterr()
    assert main(["--config", str(config), "poll"]) == 0
    captured = capsys.readouterr()
    assert "Slack token variable MY_SLACK_TOKEN is not set: notices go to the console" in captured.err
    assert "New pre-release: mcp 2.0.0rc1" in captured.out
    assert slack.messages == []
    assert state_of(config).outbox_row("release:python:2.0.0rc1:books")["status"] == "console"

    assert main(["--config", str(config), "status", "--json"]) == 0
    delivery = json.loads(capsys.readouterr().out)["delivery"]
    assert delivery["sink"] == "console" and delivery["degraded"] is True and delivery["console_notices"] == 1
    assert "MY_SLACK_TOKEN is not set" in delivery["reason"]

    # Without a token the resend refuses, loudly, and changes nothing.
    assert main(["--config", str(config), "outbox", "--resend-console"]) == 2
    assert "MY_SLACK_TOKEN is not set" in capsys.readouterr().err
    assert state_of(config).outbox_row("release:python:2.0.0rc1:books")["status"] == "console"

    monkeypatch.setenv("MY_SLACK_TOKEN", slack.token)
    assert main(["--config", str(config), "outbox", "--resend-console", "--since", "2000-01-01"]) == 0
    assert [m["metadata"]["event_payload"]["key"] for m in slack.messages] == ["release:python:2.0.0rc1:books"]
    assert state_of(config).outbox_row("release:python:2.0.0rc1:books")["status"] == "sent"
    # At most once: a second resend finds nothing to post.
    assert main(["--config", str(config), "outbox", "--resend-console"]) == 0
    assert len(slack.messages) == 1


def test_resend_since_a_date_leaves_older_console_notices(tmp_path: Path, slack: FakeSlack, write_config, monkeypatch):
    from tests.notify.test_delivery import notice

    config = write_config(
        {"teams": [{"name": "books", "slack_channel": "#books-mcp"}], "slack": {"api_url": slack.api_url}}
    )
    store = state_of(config)
    for key, printed in (("old", "2026-11-01T09:00:00Z"), ("new", "2026-11-20T09:00:00Z")):
        store.enqueue(notice(key))
        store.update_outbox(store.outbox_row(key)["id"], status="console", sent_at=printed)
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    assert main(["--config", str(config), "outbox", "--resend-console", "--since", "2026-11-15"]) == 0
    assert [m["text"] for m in slack.messages] == ["text of new"]
    assert store.outbox_row("old")["status"] == "console"


def test_first_run_without_any_slack_settings_is_console_mode_not_degraded():
    destination = describe_destination(SlackSettings(), SlackCredentials())
    assert destination.sink == "console" and not destination.degraded
    assert "first-run console mode" in destination.reason


def test_readyz_and_metrics_show_degraded_delivery(tmp_path: Path):
    from starlette.testclient import TestClient

    destination = describe_destination(SlackSettings(token_env="MY_SLACK_TOKEN"), SlackCredentials())
    store = Store(tmp_path / "watcher.db")
    app = build_app(Readiness(store, 30, utcnow(), lambda: True, destination))
    with TestClient(app) as client:
        body = client.get("/readyz").json()
        metrics = client.get("/metrics").text
    assert body["delivery"]["degraded"] is True and "MY_SLACK_TOKEN" in body["delivery"]["reason"]
    assert 'mcp_watcher_delivery_degraded{sink="console"} 1.0' in metrics


@pytest.mark.parametrize("fixed", ["#books-mcp"])
def test_retry_failed_routes_by_the_current_config(slack: FakeSlack, write_config, monkeypatch, capsys, fixed):
    """Class 8: a notice that failed on a wrong channel goes to the channel the config names now."""
    from tests.notify.test_delivery import notice

    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    wrong = write_config({"teams": [{"name": "books", "slack_channel": "#bookz"}], "slack": {"api_url": slack.api_url}})
    store = state_of(wrong)
    store.enqueue(notice("k1", channel="#bookz"))
    assert main(["--config", str(wrong), "outbox"]) == 0
    from watcher.config import load_config
    from watcher.notify.delivery import deliver_outbox, make_sink
    from watcher.notify.settings import slack_credentials

    loaded = load_config(wrong)
    deliver_outbox(store, make_sink(slack_credentials(loaded.config.slack), loaded.config.slack, store))
    assert store.outbox_row("k1")["status"] == "failed"
    right = write_config({"teams": [{"name": "books", "slack_channel": fixed}], "slack": {"api_url": slack.api_url}})
    assert main(["--config", str(right), "outbox", "--retry-failed"]) == 0
    assert [m["channel"] for m in slack.messages] == [slack.channel_id(fixed)]
    assert store.outbox_row("k1")["status"] == "sent"
