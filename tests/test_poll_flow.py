"""`mcp-watcher poll` end to end: recorded registry responses on a local server, the real slack-sdk
against the local Slack, and the state in SQLite."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.mcp_history import MCP_PAGE, McpHistory
from tests.fakes.registry_server import FIXTURES, serve_registry
from tests.fakes.slack_server import FakeSlack
from watcher.cli import main
from watcher.core.store import Store


@pytest.fixture
def registry_root(tmp_path: Path) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(FIXTURES, root)
    return root


@pytest.fixture
def registry(registry_root: Path) -> Iterator:
    with serve_registry(registry_root) as server:
        yield server


def config_for(registry, slack: FakeSlack | None) -> dict:
    return {
        "sdks": [
            {"name": "python", "registry": "pypi", "package": "mcp", "url": registry.url("pypi/simple")},
            {
                "name": "typescript",
                "registry": "npm",
                "package": "@modelcontextprotocol/sdk",
                "url": registry.url("npm"),
            },
            {"name": "rust", "registry": "crates", "package": "rmcp", "url": registry.url("crates")},
        ],
        "teams": [
            {"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]},
            {
                "name": "infra",
                "slack_channel": "#infra-mcp",
                "sdks": ["python", "rust"],
                "notify_stable": True,
                "exclude": ["1.*"],
            },
            {"name": "web", "slack_channel": "#ops", "sdks": ["typescript"]},
        ],
        "slack": {"api_url": slack.api_url if slack else None, "retries": 2},
        "http_client": {"timeout_seconds": 2, "retries": 1, "backoff_seconds": 0},
    }


def poll_json(config: Path, capsys: pytest.CaptureFixture, *extra: str) -> tuple[int, dict]:
    code = main(["--config", str(config), "poll", "--json", *extra])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_first_poll_takes_a_baseline_without_alerts(registry, slack, write_config, capsys, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    config = write_config(config_for(registry, slack))
    code, result = poll_json(config, capsys)
    assert code == 0
    assert result["baseline"] is True and sorted(result["baselined"]) == ["python", "rust", "typescript"]
    assert result["new"] == [] and result["failed"] == []
    assert slack.messages == []
    store = Store(Path(config).parent / "state" / "watcher.db")
    assert "2.0.0rc1" in store.known_versions("python", "mcp")
    # The second poll of an unchanged registry is quiet, and cheap: one 304 per source.
    registry.reset_stats()
    code, again = poll_json(config, capsys)
    assert code == 0 and again == {"baseline": False, "baselined": [], "new": [], "failed": [], "queued_runs": []}
    assert registry.stats.requests == 3 and registry.stats.not_modified == 3


def test_mcp_2_0_prereleases_are_detected_and_routed_to_the_right_teams(
    registry_root, registry, slack, write_config, capsys, monkeypatch
):
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    history = McpHistory(registry_root / MCP_PAGE)
    history.before("2.0.0a1")
    config = write_config(config_for(registry, slack))
    assert poll_json(config, capsys)[1]["baseline"] is True

    history.whole()  # the registry now lists the whole 2.0 history
    code, result = poll_json(config, capsys)
    assert code == 0 and result["baseline"] is False
    new = {r["version"]: r for r in result["new"]}
    for pre in ("2.0.0a1", "2.0.0a2", "2.0.0a3", "2.0.0b1", "2.0.0b2", "2.0.0rc1"):
        assert new[pre]["prerelease"] is True, pre
        assert new[pre]["registry"] == "pypi" and new[pre]["package"] == "mcp"
        assert new[pre]["published"].startswith("2026-0")
    assert new["2.0.0"]["prerelease"] is False and new["2.0.0"]["published"].startswith("2026-07-28")
    assert new["2.0.0rc1"]["published"].startswith("2026-07-27")

    by_channel: dict[str, list[str]] = {}
    for message in slack.messages:
        by_channel.setdefault(message["channel"], []).append(message["metadata"]["event_payload"]["key"])
    books = by_channel[slack.channel_id("#books-mcp")]
    infra = by_channel[slack.channel_id("#infra-mcp")]
    # books: pre-releases only, one message per event.
    assert sorted(books) == sorted(f"release:python:{v}:books" for v, r in new.items() if r["prerelease"])
    # infra: stable too, but its exclude pattern drops the 1.x releases that came after 2.0.
    assert "release:python:2.0.0:infra" in infra
    assert not [k for k in infra if ":1." in k]
    assert slack.channel_id("#ops") not in by_channel, "the TypeScript team hears nothing about Python"
    assert len(books) == len(set(books)) and len(infra) == len(set(infra))
    # A repeat poll sends nothing more.
    count = len(slack.messages)
    assert poll_json(config, capsys)[1]["new"] == []
    assert len(slack.messages) == count


def test_restart_between_queued_and_sent_sends_exactly_one_message(
    registry_root, registry, slack, write_config, capsys, monkeypatch
):
    history = McpHistory(registry_root / MCP_PAGE)
    history.before("2.0.0rc1")
    config = write_config(config_for(registry, slack))
    poll_json(config, capsys)
    history.before("2.0.0")
    # The poll records the event and queues the notice, then the process "dies" before delivering.
    code, result = poll_json(config, capsys, "--no-deliver")
    assert [r["version"] for r in result["new"]] == ["2.0.0rc1"]
    assert slack.messages == []
    # A new process with Slack credentials delivers what was queued, once.
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    assert main(["--config", str(config), "outbox"]) == 0
    capsys.readouterr()
    code, result = poll_json(config, capsys)
    assert result["new"] == []
    keys = [m["metadata"]["event_payload"]["key"] for m in slack.messages]
    assert keys == ["release:python:2.0.0rc1:books", "release:python:2.0.0rc1:infra"]
    poll_json(config, capsys)
    assert len(slack.messages) == 2


def test_slack_rate_limit_then_success_delivers_once(registry_root, registry, slack, write_config, capsys, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    history = McpHistory(registry_root / MCP_PAGE)
    history.before("2.0.0rc1")
    config = write_config(config_for(registry, slack))
    poll_json(config, capsys)
    history.before("2.0.0")
    slack.fail_next("chat.postMessage", status=429, retry_after=0)
    code, result = poll_json(config, capsys)
    assert code == 0 and [r["version"] for r in result["new"]] == ["2.0.0rc1"]
    assert slack.calls.count("chat.postMessage") == 3  # one refused, two accepted
    assert len(slack.messages) == 2


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ({"status": 500}, "HTTP 500"),
        ({"malformed": True}, "JSON"),
        ({"hang": True}, "timed out"),
    ],
)
def test_a_broken_registry_is_a_failed_poll_not_a_crash_nor_no_news(
    registry, slack, write_config, capsys, monkeypatch, fault, expected
):
    config = write_config(config_for(registry, None))
    poll_json(config, capsys)  # baseline while healthy
    registry.fail("/pypi/simple/mcp/", **fault)
    code, result = poll_json(config, capsys)
    assert code == 3
    assert [f["sdk"] for f in result["failed"]] == ["python"]
    assert expected in result["failed"][0]["error"]
    assert result["new"] == []
    # The other sources were still polled and recorded.
    store = Store(Path(config).parent / "state" / "watcher.db")
    polls = {row["source"]: row for row in store.db.query("select * from polls order by id")}
    assert polls["python"]["ok"] == 0 and expected in polls["python"]["error"]
    assert polls["rust"]["ok"] == 1
    # The last good data stays, and `status` says the source failed rather than "no news".
    assert "2.0.0" in store.known_versions("python", "mcp")
    assert main(["--config", str(config), "status"]) == 0
    status = capsys.readouterr().out
    assert "python" in status and "FAILED" in status and expected in status


def test_no_slack_credentials_prints_notices_to_the_console(registry_root, registry, write_config, capsys):
    history = McpHistory(registry_root / MCP_PAGE)
    history.before("2.0.0rc1")
    config = write_config(config_for(registry, None))
    poll_json(config, capsys)
    history.before("2.0.0")
    assert main(["--config", str(config), "poll"]) == 0
    out = capsys.readouterr().out
    assert "python                   new: 2.0.0rc1 (pre-release)" in out
    assert "notice for books → #books-mcp" in out and "New pre-release: mcp 2.0.0rc1" in out
    store = Store(Path(config).parent / "state" / "watcher.db")
    assert {r["status"] for r in store.outbox()} == {"console"}


def test_a_baselined_sdk_runs_its_servers_once_against_its_newest_version(registry, write_config, capsys, tmp_path):
    data = config_for(registry, None)
    data["teams"][0]["servers"] = ["library"]
    data["servers"] = [
        {
            "name": "library",
            "team": "books",
            "sdk": "python",
            "language": "python",
            "path": str(tmp_path),
            "start": ["python", "-m", "library_server", "--port", "{port}"],
            "baseline_sdk_version": "2.2.0",
        }
    ]
    config = write_config(data)
    code, result = poll_json(config, capsys, "--no-deliver")
    assert result["baseline"] is True
    assert result["queued_runs"] == ["library@2.3.0"], "the newest mcp in the recorded page"
    run = Store(Path(config).parent / "state" / "watcher.db").runs(status="queued")[0]
    assert run["trigger"] == "baseline:python:2.3.0"
    # A later poll with nothing new queues nothing more.
    assert poll_json(config, capsys, "--no-deliver")[1]["queued_runs"] == []
