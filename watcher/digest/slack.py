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
from watcher.notify.render import MAX_BLOCKS, MAX_HEADER_CHARS, MAX_SECTION_CHARS

MESSAGE_TEXT_BUDGET = 12_000
"""Characters of block text per message: well inside what Slack accepts, so a message never fails as too long."""

SLACK_ICONS = {
    "pass": ":white_check_mark:",
    "fail": ":x:",
    "error": ":warning:",
    "pending": ":hourglass_flowing_sand:",
    "not-run": ":heavy_minus_sign:",
}


def slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_span(span: Span) -> str:
    text = slack_escape(span.text)
    if span.style == "plain" or not text.strip():
        return text
    lead, core, trail = split_space(text)
    if span.style == "bold":
        return f"{lead}*{core}*{trail}"
    if span.style == "italic":
        return f"{lead}_{core}_{trail}"
    if span.style == "code":
        return f"{lead}`{core.replace('`', 'ˋ')}`{trail}"
    label = core.replace("|", "¦")
    return f"{lead}<{span.url}|{label}>{trail}"


def slack_line(line: Line) -> str:
    return "".join(_slack_span(span) for span in line)


def split_text(text: str, limit: int = MAX_SECTION_CHARS) -> list[str]:
    """Pieces of at most ``limit`` characters: at line breaks where possible, else at spaces, else hard."""
    pieces: list[str] = []
    current = ""
    for line in text.split("\n"):
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) <= limit:
            current = candidate
            continue
        if current:
            pieces.append(current)
        current = ""
        while len(line) > limit:
            cut = line.rfind(" ", 0, limit)
            cut = cut if cut > limit // 2 else limit
            pieces.append(line[:cut])
            line = line[cut:].lstrip(" ") if cut < len(line) and line[cut] == " " else line[cut:]
        current = line
    if current or not pieces:
        pieces.append(current)
    return pieces


def _sections(text: str) -> list[dict[str, Any]]:
    return [{"type": "section", "text": {"type": "mrkdwn", "text": piece}} for piece in split_text(text) if piece]


def _header(text: str) -> dict[str, Any]:
    if len(text) <= MAX_HEADER_CHARS:
        return {"type": "header", "text": {"type": "plain_text", "text": text, "emoji": True}}
    return _sections(f"*{slack_escape(text)}*")[0]


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


@dataclass
class SlackMessage:
    text: str
    blocks: list[dict[str, Any]]


def block_text(block: dict[str, Any]) -> str:
    """All the text a block shows (for budgets and for tests that check nothing was lost)."""
    if "text" in block and isinstance(block["text"], dict):
        return str(block["text"].get("text", ""))
    if block.get("type") == "context":
        return "\n".join(str(e.get("text", "")) for e in block.get("elements", []))
    if "fields" in block:
        return "\n".join(str(f.get("text", "")) for f in block["fields"])
    return ""


def _verdict_icons(text: str) -> str:
    for verdict, word in VERDICT_WORDS.items():
        text = text.replace(f": *{word}*", f": {SLACK_ICONS[verdict]} *{word}*")
    return text


def slack_messages(digest: Digest, has_picture: bool = True) -> list[SlackMessage]:
    """The digest as Slack messages: the first is the thread's parent, the rest are its replies, in order."""
    doc = document(digest)
    # (part index, block); part index −1 for the document's head.
    flow: list[tuple[int, dict[str, Any]]] = [(-1, _header(doc.title))]
    summary = slack_line(doc.summary)
    if has_picture:
        summary += " · timeline picture in the thread"
    flow.append((-1, _context(summary)))
    if doc.notes:
        flow += [(-1, block) for block in _sections("\n".join(":warning: " + slack_line(n) for n in doc.notes))]
    for index, part in enumerate(doc.parts):
        flow.append((index, {"type": "divider"}))
        flow.append((index, _header(part.title)))
        if part.intro:
            flow += [(index, block) for block in _sections("\n".join(slack_line(line) for line in part.intro))]
        for item in part.items:
            text = "\n".join([slack_line(item.title), *("• " + slack_line(line) for line in item.lines)])
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
            blocks.insert(0, _context(slack_escape(fallback)))
        messages.append(SlackMessage(fallback, blocks))
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
            carried = []
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
