"""`mcp-watcher run` with the Slack app's secrets: it opens Socket Mode, serves POST /slack/events on its own
port (signatures judged on its pinned clock), puts buttons on the alert it posts, and logs no secret."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import httpx

from tests.fakes.mcp_history import McpHistory
from tests.helpers import SERVICE_CLOCK_START, start_service, wait_until
from tests.slackapp.helpers import MEMBER, SECRET, click_payload, command_payload, form, sign
from tests.spec.helpers import spec_config


def _config(world: dict, write_config) -> Path:
    registry, slack = world["registry"], world["slack"]
    spec = spec_config(world["gh"], teams=[{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}])
    return write_config(
        {
            **spec,
            "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": registry.url("pypi/simple")}],
            "slack": {"api_url": slack.api_url, "retries": 1},
            "schedule": {"poll_minutes": 0.02, "spec_poll_minutes": 60, "deliver_seconds": 0.5},
            "http_client": {"timeout_seconds": 1, "retries": 0, "backoff_seconds": 0},
        }
    )


def test_the_service_listens_both_ways_and_buttons_its_alerts(world, write_config, tmp_path):
    slack = world["slack"]
    slack.members = {"#books-mcp": [MEMBER]}
    history = McpHistory(world["page"])
    history.before("2.0.0rc1")
    env = {"SLACK_BOT_TOKEN": slack.token, "SLACK_APP_TOKEN": slack.app_token, "SLACK_SIGNING_SECRET": SECRET}
    service = start_service(_config(world, write_config), env, tmp_path / "service.log")
    started = time.time()
    try:
        service.wait_http()
        service.wait_for_log("Slack interactivity: Socket Mode, HTTP at POST /slack/events")
        assert slack.socket.wait_connected()
        service.wait_for_log("baseline taken for python")
        history.before("2.0.0")  # 2.0.0rc1 appears
        wait_until(lambda: len(slack.messages) >= 1, message="the rc1 alert in Slack")
        alert = slack.messages[0]
        assert [e["action_id"] for e in alert["blocks"][-1]["elements"]] == ["mcpw_mute"]

        body = form(click_payload(slack, alert, "mcpw_mute", MEMBER, "1764763200.5"))
        # The service's clock is pinned two days away from the machine's: a request stamped on the machine's
        # clock is stale to it, one stamped on its own clock is fresh.
        service_now = int(datetime.fromisoformat(SERVICE_CLOCK_START).timestamp() + time.time() - started)
        for stamp, expected in ((int(time.time()), 401), (service_now, 200)):
            answer = httpx.post(
                f"{service.base}/slack/events",
                content=body.encode(),
                headers={
                    "Content-Type": "application/x-www-form-urlencoded",
                    "X-Slack-Request-Timestamp": str(stamp),
                    "X-Slack-Signature": sign(body, stamp),
                },
                timeout=10,
            )
            assert answer.status_code == expected, answer.text
        wait_until(lambda: slack.views, message="the mute modal opened")

        assert slack.socket.send("slash_commands", command_payload(slack, "help", MEMBER, "svc1")) is not None
        wait_until(lambda: any("/mcp-watcher accepted" in r.get("text", "") for r in slack.responses), message="help")
        log = service.log()
        assert slack.app_token not in log and SECRET not in log and slack.token not in log
    finally:
        code = service.terminate()
    assert code == 0
