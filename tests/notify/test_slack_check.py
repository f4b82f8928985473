"""`run --check` asks Slack before the first delivery: auth.test, then one paged users.conversations (never a
call per channel). A refused token, a missing scope and a channel the bot is not in (a team's, the
operators', one a team file reports to) fail the check; Slack that cannot be reached is a warning.

Against the loopback Slack (bench/fakes/slack_server.py) with the real slack-sdk client."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.slack_server import BOT_SCOPES, FakeSlack
from tests.suites.helpers import CLOSED
from watcher.cli import main
from watcher.notify.slack_check import INTERACTIVE_SCOPES, NEEDED_SCOPES, PAGE_SIZE

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "xoxb-check-test-token"


@pytest.fixture
def slack():
    with FakeSlack(token=TOKEN, channels=["#books-mcp", "#infra-mcp", "#ops"]) as fake:
        yield fake


def check(write_config, monkeypatch, capsys, api_url: str, token: str = TOKEN, **extra) -> tuple[int, list[str]]:
    monkeypatch.setenv("SLACK_BOT_TOKEN", token)
    config = write_config(
        {
            "teams": [
                {"name": "books", "slack_channel": "#books-mcp"},
                {"name": "infra", "slack_channel": "#infra-mcp"},
            ],
            # The infra team's servers come from its repository's team file: their notices go to #infra-mcp.
            "repos": [{"git": "https://github.com/example/infra-mcp", "team": "infra"}],
            "slack": {"api_url": api_url, "operators_channel": "#ops", "retries": 0, "timeout_seconds": 5},
            "http": {"enabled": False},
            **extra,
        }
    )
    code = main(["--config", str(config), "run", "--check"])
    return code, capsys.readouterr().out.splitlines()


def slack_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if "Slack" in line]


def test_a_working_token_in_every_channel_is_ready_after_two_calls(slack, write_config, monkeypatch, capsys):
    code, lines = check(write_config, monkeypatch, capsys, slack.api_url)
    assert code == 0, lines
    assert lines[-1] == "start-up check: ready to start"
    said = slack_lines(lines)
    assert any("the token works: bot 'mcp-watcher' in the workspace 'Fake'" in line for line in said), said
    assert f"Slack: the token has the {len(NEEDED_SCOPES)} scopes the service uses" in said
    assert "Slack: the bot is in every channel notices go to (#books-mcp, #infra-mcp, #ops)" in said
    assert slack.calls == ["auth.test", "users.conversations"]


def test_a_fake_token_fails_the_check(slack, write_config, monkeypatch, capsys):
    code, lines = check(write_config, monkeypatch, capsys, slack.api_url, token="xoxb-not-a-real-token")
    assert code == 1
    assert "FAIL: Slack: the bot token is refused: invalid_auth (Slack does not know this token)" in lines
    assert lines[-1] == "start-up check: FAILED"
    assert slack.calls == ["auth.test"]
    assert not any("xoxb-not-a-real-token" in line for line in lines)  # a token is never printed


def test_a_scope_the_token_lacks_is_named(slack, write_config, monkeypatch, capsys):
    slack.scopes = [s for s in BOT_SCOPES if s not in ("channels:history", "groups:read")]
    code, lines = check(write_config, monkeypatch, capsys, slack.api_url)
    assert code == 1
    failed = [line for line in lines if line.startswith("FAIL: ")]
    assert any("lacks the scope channels:history (finding a message already posted" in line for line in failed)
    assert any("lacks the scope groups:read" in line for line in failed)
    # users.conversations itself refuses without groups:read (private channels): Slack names the scope.
    assert any("users.conversations needs the scope groups:read the token lacks" in line for line in failed), failed


def test_the_interactive_apps_scopes_are_asked_for_only_with_an_app_token(slack, write_config, monkeypatch, capsys):
    slack.scopes = list(NEEDED_SCOPES)  # everything delivery uses, nothing for the buttons
    code, _ = check(write_config, monkeypatch, capsys, slack.api_url)
    assert code == 0
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-check-test")
    code, lines = check(write_config, monkeypatch, capsys, slack.api_url)
    assert code == 1
    for scope in INTERACTIVE_SCOPES:
        assert any(f"lacks the scope {scope}" in line for line in lines), lines


def test_channels_the_bot_is_not_in_are_named_with_why_they_matter(slack, write_config, monkeypatch, capsys):
    slack.bot_channels = ["#books-mcp"]
    code, lines = check(write_config, monkeypatch, capsys, slack.api_url)
    assert code == 1
    failed = [line for line in lines if line.startswith("FAIL: ")]
    assert len(failed) == 2, failed
    [infra] = [line for line in failed if "#infra-mcp" in line]
    assert "(team infra, team file of https://github.com/example/infra-mcp)" in infra
    assert "/invite @mcp-watcher" in infra and "not_in_channel" in infra
    assert any("#ops (operator alerts)" in line for line in failed)


def test_many_channels_are_one_paged_listing_not_a_call_per_channel(write_config, monkeypatch, capsys):
    others = [f"#other-{n:03d}" for n in range(2 * PAGE_SIZE + 50)]
    with FakeSlack(token=TOKEN, channels=[*others, "#books-mcp", "#infra-mcp", "#ops"], private=["#ops"]) as slack:
        code, lines = check(write_config, monkeypatch, capsys, slack.api_url)
        assert code == 0, lines
        assert slack.calls == ["auth.test"] + ["users.conversations"] * 3


def test_a_channel_given_by_id_is_checked_by_id(slack, write_config, monkeypatch, capsys):
    ops = slack.channel_id("#ops")
    slack.bot_channels = ["#books-mcp", "#infra-mcp"]
    code, lines = check(write_config, monkeypatch, capsys, slack.api_url)
    assert code == 1 and any("#ops" in line for line in lines if line.startswith("FAIL: "))
    slack.bot_channels = None
    extra = {"slack": {"api_url": slack.api_url, "operators_channel": ops, "retries": 0, "timeout_seconds": 5}}
    code, lines = check(write_config, monkeypatch, capsys, slack.api_url, **extra)
    assert code == 0, lines


@pytest.mark.parametrize("how", ["closed-port", "503"])
def test_slack_unreachable_is_a_warning_not_a_failure(slack, write_config, monkeypatch, capsys, how: str):
    if how == "503":
        slack.fail_next("auth.test", status=503)
        url = slack.api_url
    else:
        url = f"{CLOSED}/api/"
    code, lines = check(write_config, monkeypatch, capsys, url)
    assert code == 0, lines
    [warning] = [line for line in lines if line.startswith("WARNING: Slack could not be asked")]
    assert "notices wait in the outbox until Slack answers" in warning
    assert lines[-1] == "start-up check: ready to start"


def test_needed_scopes_are_the_manifests(slack):
    import yaml

    manifest = yaml.safe_load((ROOT / "deploy" / "slack-app-manifest.yaml").read_text(encoding="utf-8"))
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == set(NEEDED_SCOPES) | set(INTERACTIVE_SCOPES)
    assert set(BOT_SCOPES) == set(NEEDED_SCOPES) | set(INTERACTIVE_SCOPES)  # the fake grants what the app asks
