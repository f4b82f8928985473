"""The Slack app tests' helpers: the watcher and Slack's side of a click are in bench/slackapp.py (the Slack
acknowledgement benchmark drives them too); here what only the tests use (modals, commands, rendering)."""

from __future__ import annotations

import time
from typing import Any

from bench.slackapp import (  # noqa: F401  (re-exported for the tests)
    CHANGES,
    CLOCK_START,
    GROUPIE,
    MEMBER,
    OUTSIDER,
    PACKAGE,
    PAGE_TOKEN,
    SDK,
    SECRET,
    SERVER,
    VERSION,
    Watcher,
    button,
    click_payload,
    config_text,
    form,
    pinned_clock,
    seed_thread,
    sign,
    start_watcher,
)
from tests.fakes.slack_server import FakeSlack, wait_for


def submission_payload(view: dict[str, Any], user: str, values: dict[str, Any]) -> dict[str, Any]:
    """A view_submission payload for a modal the app opened (as the fake recorded it)."""
    return {
        "type": "view_submission",
        "team": {"id": "T1", "domain": "fake"},
        "user": {"id": user, "username": user.lower(), "team_id": "T1"},
        "api_app_id": "A1",
        "token": "legacy-verification-token",
        "trigger_id": f"trigger-submit-{view['id']}",
        "view": {**view, "state": {"values": values}},
    }


def command_payload(slack: FakeSlack, text: str, user: str, trigger: str) -> dict[str, str]:
    return {
        "token": "legacy-verification-token",
        "team_id": "T1",
        "channel_id": slack.channel_id("#books-mcp"),
        "channel_name": "books-mcp",
        "user_id": user,
        "user_name": user.lower(),
        "command": "/mcp-watcher",
        "text": text,
        "api_app_id": "A1",
        "response_url": slack.response_url(f"cmd-{trigger}"),
        "trigger_id": trigger,
    }


def wait_responses(slack: FakeSlack, count: int, timeout: float = 10) -> list[dict[str, Any]]:
    assert wait_for(lambda: len(slack.responses) >= count, timeout), slack.responses
    return slack.responses


def render_thread(watcher: Watcher, parent: dict[str, Any]) -> str:
    """The thread as text: each message with its buttons, the replies under it (for docs/slack-app.md)."""
    lines = []
    thread = [parent, *[m for m in watcher.slack.messages if m["thread_ts"] == parent["ts"]]]
    for message in thread:
        indent = "    " if message["thread_ts"] else ""
        lines.append(f"{indent}[{message['ts']}] mcp-watcher:")
        lines += [f"{indent}  {line}" for line in str(message["text"]).splitlines()]
        for block in message["blocks"] or []:
            if block.get("type") == "actions":
                names = []
                for element in block["elements"]:
                    link = f" → {element['url']}" if element.get("url") else ""
                    names.append(f"[ {element['text']['text']}{link} ]")
                lines.append(f"{indent}  " + "  ".join(names))
        lines.append("")
    return "\n".join(lines)


def settle(seconds: float = 0.3) -> None:
    """Give Bolt's listener threads a moment where a test checks that nothing (more) happened."""
    time.sleep(seconds)
