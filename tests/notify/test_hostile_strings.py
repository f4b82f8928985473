"""Hostile outside strings fed through the builders (every kind end to end: test_hostile_notices.py): no Slack
command (`<!channel>`, `<@U…>`, `<#C…>`) and no disguised link survives a builder, in the blocks or in the
fallback text; and `blocks.guard`, which every Slack sink applies last, defuses whatever a builder might
still let through."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.digest.helpers import DIGEST_NOW, TODAY, add_release, build_state
from tests.notify.test_hostile_notices import suite_report
from watcher.digest.build import build_digest
from watcher.digest.slack import slack_messages
from watcher.notify import blocks as kit
from watcher.sources.events import ReleaseEvent
from watcher.sources.notices import release_notice
from watcher.suites.notices import render as render_suite

HOSTILE = "x <!channel> <@U024BE7LH> <#C024BE7LH> <https://evil.example/steal|the docs> & more"
LINK_OUT = re.compile(r"<(?:https?://evil|!|@|#)")


def _everything(text: str, blocks: list[dict[str, Any]] | None) -> str:
    return text + "\n" + json.dumps(blocks or [])


def _mrkdwn(blocks: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The blocks without their plain-text headers (Slack renders no link there; commands are checked apart)."""
    return [b for b in blocks or [] if b.get("type") != "header"]


def _assert_clean(text: str, blocks: list[dict[str, Any]] | None) -> None:
    found = LINK_OUT.findall(_everything(text, _mrkdwn(blocks)))
    assert not found, f"raw Slack markup from outside in a notice: {found}"
    assert not re.search(r"<[!@#]", json.dumps(blocks or [])), "a Slack command in a header"


def test_a_suite_result_escapes_reasons_errors_log_tails_names_and_refuses_a_disguised_link():
    report = suite_report()  # hostile text in every outside field (the end-to-end test's report)
    text, blocks = render_suite(report)
    _assert_clean(text, blocks)
    assert "&lt;!channel&gt;" in text and "&amp;amp;" in text
    assert "GitHub Actions run" not in _everything(text, blocks)  # an address that could disguise a link: none
    _assert_clean(*render_suite({**report, "contract": {"error": HOSTILE}, "install": None, "conformance": []}))


def test_a_release_alert_escapes_the_version_and_package_everywhere():
    release = ReleaseEvent(
        sdk="kotlin",
        registry="github",
        package="acme/sdk",
        version="v1.2.0-beta " + HOSTILE,
        prerelease=True,
        yanked=False,
        published=HOSTILE,
        first_seen="2026-11-20T10:00:00Z",
    )
    text, blocks = release_notice(release, ["books"])
    _assert_clean(text, blocks)
    assert "No suite run" in text


@pytest.mark.parametrize(
    "hostile",
    ["<!channel>", "<!here|here>", "<!subteam^S123>", "<@U123>", "<#C123|general>", "<!everyone>"],
)
def test_guard_defuses_every_slack_command_in_text_and_blocks(hostile: str):
    # As if a builder had let it through raw (the type makes that a mypy error; the guard is the last belt).
    raw = kit.Mrkdwn(hostile)
    blocks = [
        kit.section(raw),
        kit.context(raw),
        kit.fields([("a", raw)]),
        {"type": "rich_text", "elements": [{"type": "rich_text_section", "elements": [{"text": hostile}]}]},
    ]
    text, guarded = kit.guard(f"fallback {hostile}", blocks)
    assert not LINK_OUT.search(_everything(text, guarded))
    # Our own links and formatting pass untouched.
    ours = [
        kit.context(kit.link("https://github.com/acme/x/actions/runs/1", "GitHub Actions run") + kit.Mrkdwn(" *b*"))
    ]
    assert kit.guard("plain", ours) == ("plain", ours)


def test_safe_url_accepts_plain_addresses_only():
    assert kit.safe_url("https://github.com/acme/books/actions/runs/11750009001") is not None
    for bad in ["https://e.example/x|label", "https://e.example/<!channel>", "javascript:alert(1)", "https://a b", ""]:
        assert kit.safe_url(bad) is None, bad


def test_the_console_shows_the_characters_not_the_entities_and_no_terminal_escapes():
    assert kit.for_console("Node &gt;= 22 &amp; npm &lt;x&gt;") == "Node >= 22 & npm <x>"
    assert kit.for_console("tag v1\x1b[2J\x07") == "tag v1\\x1b[2J\\x07"  # shown, not sent
    assert kit.for_console("two\nlines\tkept") == "two\nlines\tkept"


def test_the_weekly_digest_escapes_a_hostile_release_version(tmp_path: Path):
    state = build_state(tmp_path)
    hostile = "2.4.0b2 <!channel> <https://evil.example|notes>"
    add_release(state.store, "python", "pypi", "mcp", hostile, True, datetime(2026, 11, 27, 9, 0, tzinfo=UTC))
    digest = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW)
    messages = slack_messages(digest)
    shown = "\n".join(_everything(m.text, m.blocks) for m in messages)
    assert "2.4.0b2" in shown  # the release is listed …
    for message in messages:
        _assert_clean(message.text, message.blocks)  # … escaped
