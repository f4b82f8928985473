"""Buttons are posted only when Slack can deliver their clicks; links only when the pages have a public URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slackapp.helpers import SERVER, VERSION, config_text, pinned_clock
from watcher.config import LoadedConfig, parse_config
from watcher.core.store import Store
from watcher.core.timefmt import utcnow
from watcher.decisions import buttons, records
from watcher.decisions.records import Actor, Origin
from watcher.notify.settings import SlackCredentials
from watcher.ops.status import render_status
from watcher.slackapp.connect import describe, slack_app
from watcher.slackapp.summary import slack_status, status_lines

REPORT = {
    "server": SERVER,
    "sdk": "python",
    "sdk_version": VERSION,
    "run_id": 7,
    "contract": {"changes": [{"rule": "tool_removed", "list": "tools", "name": "search_books"}]},
}


def _config(tmp_path: Path, public_url: str | None = "https://watcher.example.org"):
    (tmp_path / "books").mkdir(exist_ok=True)
    return parse_config(config_text(tmp_path / "state.db", public_url))


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"SLACK_APP_TOKEN": "xapp-1"},  # no bot token: nothing could post the replies
        {"SLACK_BOT_TOKEN": "xoxb-1"},  # nothing to hear Slack with
    ],
)
def test_without_a_way_to_hear_slack_no_button_is_posted_and_nothing_listens(tmp_path, monkeypatch, env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = _config(tmp_path)
    assert buttons.result_buttons(config, REPORT, 7) == []
    assert buttons.alert_buttons(config, "books", "python", VERSION, True, [SERVER]) == []
    assert buttons.digest_buttons(config) == []
    assert buttons.with_actions([{"type": "divider"}], []) == [{"type": "divider"}]
    loaded = LoadedConfig(config, tmp_path / "watcher.yaml", tmp_path)
    credentials = SlackCredentials(token=env.get("SLACK_BOT_TOKEN"), app_token=env.get("SLACK_APP_TOKEN"))
    app = slack_app(loaded, Store(tmp_path / "s.db"), credentials, lambda: None)
    assert app is None and describe(app) == {"enabled": False, "modes": []}


@pytest.mark.parametrize("secret", ["SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"])
def test_either_secret_with_the_bot_token_brings_the_buttons(tmp_path, monkeypatch, secret):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv(secret, "s")
    config = _config(tmp_path)
    ids = [b["action_id"] for b in buttons.result_buttons(config, REPORT, 7)]
    assert ids == ["mcpw_rerun", "mcpw_accept", "mcpw_mute", "mcpw_open_run"]
    (link,) = buttons.digest_buttons(config)
    assert link["url"] == "https://watcher.example.org/deprecations" and link["text"]["text"] == "Open deprecations"
    alert = buttons.alert_buttons(config, "books", "python", VERSION, True, [SERVER, "other"])
    assert [b["text"]["text"] for b in alert] == [f"Rerun {SERVER}", "Rerun other", "Mute this SDK line…"]
    assert [b["action_id"] for b in buttons.alert_buttons(config, "books", "python", "2.4.0", False, [])] == []


def test_without_the_runs_stored_id_there_is_no_accept_and_no_link(tmp_path, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    ids = [b["action_id"] for b in buttons.result_buttons(_config(tmp_path), REPORT, None)]
    assert ids == ["mcpw_rerun", "mcpw_mute"]


def test_without_a_public_url_there_are_no_links(tmp_path, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    config = _config(tmp_path, public_url=None)
    assert "mcpw_open_run" not in [b["action_id"] for b in buttons.result_buttons(config, REPORT, 7)]
    assert buttons.digest_buttons(config) == []


def test_a_full_message_gets_no_actions_block():
    full = [{"type": "divider"}] * 50
    assert buttons.with_actions(full, [buttons.button("Rerun", buttons.RERUN, "{}")]) == full


def test_status_shows_what_was_done_from_slack(tmp_path, monkeypatch):
    with pinned_clock(monkeypatch):
        store = Store(tmp_path / "s.db")
        actor = Actor("U1", "alice")
        action = records.claim(
            store, "d1", actor, "books", "rerun", Origin("C1", "1.2"), server=SERVER, version=VERSION
        )
        assert action is not None and records.claim(store, "d1", actor, "books", "rerun", Origin("C1", "1.2")) is None
        records.finish(store, action, "queued run 2")
        records.add_mute(store, "books", "python", "mcp", utcnow().replace(year=2027), actor, action)
        section = slack_status(store, utcnow())
    (line,) = section["actions"]
    assert line.startswith("2026-12-03T1")  # the pinned clock's day
    assert line.split(" ", 1)[1] == f"alice (U1): rerun {SERVER} @ {VERSION} from message 1.2 in C1 → queued run 2"
    lines = status_lines(section)
    assert any(x.startswith("  muted: mcp pre-releases for books until 2027-12-03T") for x in lines)
    text = render_status(_minimal_status(section))
    assert "SLACK ACTIONS" in text and "queued run 2" in text


def _minimal_status(section: dict) -> dict:
    return {
        "state": "s.db",
        "polling": {"enabled": False, "now": {"reason": "flat", "next_change": None}},
        "sources": [],
        "runs": {"queued": [], "running": [], "last": {}},
        "outbox": {"pending": 0, "failed": 0, "oldest_pending_seconds": None, "failed_keys": []},
        "slack": section,
    }


def _record_version(store: Store, sdk: str, version: str, *, prerelease: bool) -> None:
    from watcher.core.store_schema import VersionRow

    row = VersionRow(
        sdk=sdk,
        registry="pypi",
        package="mcp",
        version=version,
        prerelease=int(prerelease),
        yanked=0,
        published=None,
        first_seen="2026-11-30T00:00:00+00:00",
        baseline=0,
    )
    store.add_version(row)


def test_a_rerun_result_is_a_new_reply_and_a_muted_teams_prerelease_result_is_not_sent(tmp_path, monkeypatch):
    from watcher.core.store_schema import Notice

    with pinned_clock(monkeypatch):
        store = Store(tmp_path / "s.db")
        _record_version(store, "python", "2.4.0b1", prerelease=True)
        notice = Notice(f"run:{SERVER}:{VERSION}:books", "books", "#books-mcp", "suite_result", "t", [])
        now = utcnow()
        trigger = "release:python:2.4.0b1"
        assert records.result_after_slack(store, notice, "python", "2.4.0b1", trigger, now) == notice
        rerun = records.result_after_slack(store, notice, "python", "2.4.0b1", records.rerun_trigger(5), now)
        assert rerun is not None and rerun.key == f"run:{SERVER}:{VERSION}:books:slack-rerun:5"
        records.add_mute(store, "books", "python", "mcp", now.replace(year=2027), Actor("U1", "a"), 1)
        assert records.result_after_slack(store, notice, "python", "2.4.0b1", trigger, now) is None
        assert records.result_after_slack(store, notice, "python", "2.4.0b1", records.rerun_trigger(6), now) is not None
        assert records.result_after_slack(store, notice, "typescript", "2.4.0b1", None, now) == notice


def test_a_mute_of_the_sdk_line_never_silences_a_final_release_or_a_version_never_polled(tmp_path, monkeypatch):
    from watcher.core.store_schema import Notice

    with pinned_clock(monkeypatch):
        store = Store(tmp_path / "s.db")
        _record_version(store, "python", "2.4.0", prerelease=False)
        notice = Notice(f"run:{SERVER}:2.4.0:books", "books", "#books-mcp", "suite_result", "t", [])
        now = utcnow()
        records.add_mute(store, "books", "python", "mcp", now.replace(year=2027), Actor("U1", "a"), 1)
        assert records.result_after_slack(store, notice, "python", "2.4.0", "release:python:2.4.0", now) == notice
        assert records.result_after_slack(store, notice, "python", "2.5.0rc1", None, now) == notice
        assert store.is_prerelease("python", "2.4.0") is False
        assert store.is_prerelease("python", "2.5.0rc1") is None
