"""The digest as Slack Block Kit messages.

Slack's limits are met by splitting, never by cutting: a section longer than 3,000 characters becomes several
sections (at line breaks, else at spaces), and the blocks are packed into messages of at most 50; the first
message is the thread's parent and the others are posted as replies in its thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from watcher.digest.document import VERDICT_WORDS, Document, Line, Span, document, plain, split_space
from watcher.digest.model import Digest
from watcher.notify.blocks import (
    MAX_BLOCKS,
    MAX_HEADER_CHARS,
    VERDICT_ICONS,
    Mrkdwn,
    block_text,
    context,
    divider,
    escape,
    header,
    link,
    section,
    split_text,
)

MESSAGE_TEXT_BUDGET = 12_000
"""Characters of block text per message: well inside what Slack accepts, so a message never fails as too long."""


_STYLES = {"bold": Mrkdwn("{}*{}*{}"), "italic": Mrkdwn("{}_{}_{}"), "code": Mrkdwn("{}`{}`{}")}


def _slack_span(span: Span) -> Mrkdwn:
    if span.style == "plain" or not span.text.strip():
        return escape(span.text)
    lead, core, trail = split_space(span.text)
    if span.style == "link":
        return Mrkdwn("{}{}{}").format(lead, link(span.url or "", core), trail)
    if span.style == "code":
        core = core.replace("`", "ˋ")
    return _STYLES[span.style].format(lead, core, trail)


def slack_line(line: Line) -> Mrkdwn:
    return Mrkdwn("").join(_slack_span(span) for span in line)


def _sections(text: Mrkdwn) -> list[dict[str, Any]]:
    return [section(piece) for piece in split_text(text) if piece]


def _header(text: str) -> dict[str, Any]:
    """A header block, or a bold section when the title is longer than a header may be (never cut)."""
    if len(text) <= MAX_HEADER_CHARS:
        return header(text)
    return _sections(Mrkdwn("*{}*").format(text))[0]


@dataclass
class SlackMessage:
    text: Mrkdwn
    blocks: list[dict[str, Any]]


def _verdict_icons(text: Mrkdwn) -> Mrkdwn:
    for verdict, word in VERDICT_WORDS.items():
        text = text.replace(f": *{word}*", Mrkdwn(": {} *{}*").format(VERDICT_ICONS[verdict], word))
    return text


def slack_messages(digest: Digest, has_picture: bool = True) -> list[SlackMessage]:
    """The digest as Slack messages: the first is the thread's parent, the rest are its replies, in order."""
    doc = document(digest)
    # (part index, block); part index −1 for the document's head.
    flow: list[tuple[int, dict[str, Any]]] = [(-1, _header(doc.title))]
    summary = slack_line(doc.summary)
    if has_picture:
        summary += Mrkdwn(" · timeline picture in the thread")
    flow.append((-1, context(summary)))
    if doc.notes:
        notes = Mrkdwn("\n").join(Mrkdwn(":warning: ") + slack_line(n) for n in doc.notes)
        flow += [(-1, block) for block in _sections(notes)]
    for index, part in enumerate(doc.parts):
        flow.append((index, divider()))
        flow.append((index, _header(part.title)))
        if part.intro:
            flow += [(index, block) for block in _sections(Mrkdwn("\n").join(slack_line(ln) for ln in part.intro))]
        for item in part.items:
            text = Mrkdwn("\n").join([slack_line(item.title), *(Mrkdwn("• ") + slack_line(ln) for ln in item.lines)])
            flow += [(index, block) for block in _sections(_verdict_icons(text))]
    pages = _pack(flow, doc)
    total = len(pages)
    messages = []
    for number, blocks in enumerate(pages, 1):
        if number == 1:
            fallback = f"{doc.title}: {plain(doc.summary)}"
            if total > 1:
                fallback += f" (continued in {total - 1} repl{'y' if total == 2 else 'ies'} in the thread)"
        else:
            fallback = f"{doc.title} (part {number} of {total})"
            blocks.insert(0, context(escape(fallback)))
        messages.append(SlackMessage(escape(fallback), blocks))
    return messages


def _pack(flow: list[tuple[int, dict[str, Any]]], doc: Document) -> list[list[dict[str, Any]]]:
    """Fill messages in order. A message never ends on a divider or a heading: those move to the next one."""
    room = MAX_BLOCKS - 2  # each continuation adds a "part n of m" line and may repeat its part's title
    pages: list[list[dict[str, Any]]] = [[]]
    used = 0
    for position, (part, block) in enumerate(flow):
        size = len(block_text(block))
        page = pages[-1]
        # A heading needs its first content in the same message; a divider its heading and that content.
        lookahead = {"header": 1, "divider": 2}.get(block["type"], 0) if position + 1 < len(flow) else 0
        if len(page) + 1 + lookahead > room or (page and used + size > MESSAGE_TEXT_BUDGET):
            carried: list[dict[str, Any]] = []
            while page and page[-1]["type"] in ("header", "divider"):
                carried.insert(0, page.pop())
            pages.append([b for b in carried if b["type"] != "divider"])  # a new message is separation enough
            page = pages[-1]
            used = sum(len(block_text(b)) for b in page)
            if block["type"] == "divider":
                continue
            if not page and block["type"] != "header" and part >= 0:
                page.append(_header(f"{doc.parts[part].title} (continued)"))
        page.append(block)
        used += size
    return [page for page in pages if page]


def slack_payloads(messages: Sequence[SlackMessage]) -> list[dict[str, Any]]:
    return [{"text": m.text, "blocks": m.blocks} for m in messages]
