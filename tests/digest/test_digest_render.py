"""Slack Block Kit within Slack's limits (split, never cut), and Markdown/HTML saying the same as Slack."""

from __future__ import annotations

import html
import re
from pathlib import Path

from tests.digest.helpers import DIGEST_NOW, TODAY, big_registry, build_state
from watcher.digest.build import build_digest
from watcher.digest.document import document, plain
from watcher.digest.markdown import render_html, render_markdown
from watcher.digest.model import Digest
from watcher.digest.slack import slack_messages
from watcher.notify.blocks import block_text

SECTION_LIMIT, HEADER_LIMIT, BLOCK_LIMIT = 3000, 150, 50


def slack_plain(text: str) -> str:
    """What a reader sees of Slack mrkdwn: links as their label, no markup or emoji codes, entities decoded."""
    text = re.sub(r"<([^|>]+)\|([^>]+)>", r"\2", text)
    text = re.sub(r":[a-z0-9_+-]+: ", "", text)
    text = re.sub(r"[*`]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", "", text)  # markup, not the _ inside on_stable
    return html.unescape(text)


def md_plain(text: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\\(.)", r"\1", re.sub(r"(?<!\\)[*`]", "", text))
    return text


def html_plain(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def squash(text: str) -> str:
    return " ".join(text.split())


def facts(digest: Digest) -> list[str]:
    """Every line of the laid-out document: what each rendering must show, word for word."""
    doc = document(digest)
    lines = [doc.title, plain(doc.summary), *(plain(n) for n in doc.notes)]
    for part in doc.parts:
        lines.append(part.title)
        lines += [plain(line).removeprefix("• ") for line in part.intro]
        for item in part.items:
            lines += [plain(item.title), *(plain(line) for line in item.lines)]
    return lines


def test_slack_markdown_and_html_say_the_same(tmp_path: Path):
    state = build_state(tmp_path)
    digest = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW)
    messages = slack_messages(digest)
    assert len(messages) == 1, "a normal week fits one message"
    slack_text = squash(slack_plain("\n".join(block_text(b) for m in messages for b in m.blocks)))
    markdown = squash(md_plain(render_markdown(digest, "timeline.png")))
    page = render_html(digest, "timeline.png")
    page_text = squash(html_plain(page))
    expected = facts(digest)
    assert len(expected) > 40
    for fact in expected:
        fact = squash(fact)
        assert fact in slack_text, f"Slack lacks: {fact}"
        assert fact in markdown, f"Markdown lacks: {fact}"
        assert fact in page_text, f"HTML lacks: {fact}"
    # The links survive as links in each format.
    thread = "https://slack.com/archives/C00000001/p1764144000000200"
    assert f"<{thread}|alert thread>" in messages[0].blocks.__repr__()
    assert f"[alert thread]({thread})" in render_markdown(digest)
    assert f'<a href="{thread}">alert thread</a>' in page
    assert '<img src="timeline.png" alt="Timeline of deprecated features"' in page
    assert page.startswith("<!doctype html>") and "<title>Deprecation digest · books · 2026-W49</title>" in page


def test_slack_text_is_escaped_and_verdicts_are_marked(tmp_path: Path):
    state = build_state(tmp_path)
    digest = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW)
    blocks = slack_messages(digest)[0].blocks
    text = "\n".join(block_text(b) for b in blocks)
    assert "library: :white_check_mark: *PASS*" in text
    assert "catalog: :hourglass_flowing_sand: *PENDING* — suite run #2 queued" in text
    assert blocks[0] == {
        "type": "header",
        "text": {"type": "plain_text", "text": "Deprecation digest · books · 2026-W49", "emoji": True},
    }
    assert "*HTTP+SSE transport* — deprecated in `2025-03-26` (SEP-2596) — *affects catalog*" in text


def test_a_long_digest_is_split_into_thread_messages_within_slacks_limits_and_nothing_is_lost(tmp_path: Path):
    long_migration = " ".join(f"step-{n:04d} rewrite the handler." for n in range(180))  # ~4,900 characters
    state = build_state(tmp_path, registry=big_registry(70, long_migration), extra_servers=30)
    digest = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW)
    assert len(digest.deprecated) == 75 and len(digest.servers) == 33
    messages = slack_messages(digest)
    assert len(messages) >= 3
    for number, message in enumerate(messages, 1):
        assert 0 < len(message.blocks) <= BLOCK_LIMIT
        assert message.text
        for block in message.blocks:
            if block["type"] == "section":
                assert 0 < len(block["text"]["text"]) <= SECTION_LIMIT
            if block["type"] == "header":
                assert len(block["text"]["text"]) <= HEADER_LIMIT
        assert message.blocks[-1]["type"] not in ("header", "divider"), "a message never ends on a heading"
        if number > 1:
            assert message.blocks[0]["type"] == "context"
            assert f"(part {number} of {len(messages)})" in message.blocks[0]["elements"][0]["text"]
    assert "(continued in" in messages[0].text

    everything = squash(slack_plain("\n".join(block_text(b) for m in messages for b in m.blocks)))
    for fact in facts(digest):
        assert squash(fact) in everything, f"lost in splitting: {fact[:80]}"
    assert squash(long_migration) in everything, "the 4,900-character migration path arrives whole"
    for n in range(70):
        assert f"Feature number {n:03d}" in everything
    for n in range(30):
        assert f"branch-{n:02d} (python SDK)" in everything


def test_a_heading_never_ends_a_message_even_when_the_text_budget_is_what_fills_it():
    from watcher.digest.document import Document, Part
    from watcher.digest.slack import _pack

    doc = Document("Digest", [], [], [Part("First part"), Part("Second part")])

    def section(char: str) -> dict:
        return {"type": "section", "text": {"type": "mrkdwn", "text": char * 2900}}

    flow = [(0, {"type": "header", "text": {"type": "plain_text", "text": "First part"}})]
    flow += [(0, section(c)) for c in "abcd"]
    flow += [(1, {"type": "divider"}), (1, {"type": "header", "text": {"type": "plain_text", "text": "Second part"}})]
    flow += [(1, section("e")), (1, section("f"))]
    pages = _pack(flow, doc)
    assert [[b["type"] for b in page] for page in pages] == [
        ["header", "section", "section", "section", "section"],
        ["header", "section", "section"],
    ]
    assert pages[1][0]["text"]["text"] == "Second part", "the heading moved along with its content"
    assert [block_text(b)[0] for page in pages for b in page if b["type"] == "section"] == list("abcdef")
