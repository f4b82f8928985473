"""Slack's message limits and the small Block Kit layer that every capability builds its notices from.

Text we did not write is escaped (``escape``) before it goes into mrkdwn; a link is made only of an address
``safe_url`` accepts. Text over a limit is either clipped with the one marker ``CLIP_MARKER`` (``clip``, and
every builder below) or, where nothing may be lost, split first into pieces that fit (``split_text``).

Every message leaves through ``guard`` (the Slack sinks call it): whatever a builder let through, no Slack
command (``<!channel>``, ``<!here>``, ``<!subteam^…>``, ``<@user>``, ``<#channel>``) survives it, since no
notice of ours ever means to ping anyone.
"""

from __future__ import annotations

import re
from typing import Any

MAX_BLOCKS = 50
"""Blocks in one message."""
MAX_SECTION_CHARS = 3000
"""Characters in a section's or a context element's text; also what we send as a message's fallback text."""
MAX_HEADER_CHARS = 150
"""Characters in a header block's plain text."""
MAX_FIELD_CHARS = 2000
"""Characters in one field of a section."""
MAX_FIELDS = 10
"""Fields in one section."""

CLIP_MARKER = " … (cut to fit Slack)"

VERDICT_ICONS = {
    "pass": ":white_check_mark:",
    "fail": ":x:",
    "error": ":warning:",
    "pending": ":hourglass_flowing_sand:",
    "not-run": ":heavy_minus_sign:",
}
"""Slack emoji for a suite verdict (and the digest's "not judged yet" states)."""


def escape(text: str) -> str:
    """Slack mrkdwn needs &, < and > escaped in text we did not write."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_URL = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%!$'()*+,;=:@/?#-]*)?")
_COMMAND = re.compile(r"<(?=[!@#])")


def safe_url(url: str) -> str | None:
    """``url`` when it may be the target of a mrkdwn link (http or https, no ``<``, ``>``, ``|``, ``&``,
    space or quote that could end or disguise the link); None otherwise."""
    return url if _URL.fullmatch(url) else None


def defuse(text: str) -> str:
    """``text`` with every Slack command (``<!…>``, ``<@…>``, ``<#…>``) turned into visible text."""
    return _COMMAND.sub("&lt;", text)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def for_console(text: str) -> str:
    """A notice's text for a terminal: Slack's three entities shown as the characters they stand for, and no
    control character from outside (a tag could carry terminal escape sequences)."""
    shown = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return _CONTROL.sub("\N{REPLACEMENT CHARACTER}", shown)


def guard(text: str, blocks: list[dict[str, Any]] | None) -> tuple[str, list[dict[str, Any]] | None]:
    """The message as it may be sent: ``defuse`` applied to the fallback text and every text in the blocks."""
    return defuse(text), [_defused(block) for block in blocks] if blocks else blocks


def _defused(value: Any) -> Any:
    if isinstance(value, str):
        return defuse(value)
    if isinstance(value, list):
        return [_defused(item) for item in value]
    if isinstance(value, dict):
        if value.get("type") == "plain_text" and isinstance(value.get("text"), str):
            # Shown as written (an entity would show as "&lt;"): a look-alike opens the would-be command.
            return {**value, "text": _COMMAND.sub("\u2039", value["text"])}
        return {key: v if key in ("type", "action_id", "block_id", "url") else _defused(v) for key, v in value.items()}
    return value


def clip(text: str, limit: int) -> str:
    """``text`` shortened to ``limit`` characters, ending in ``CLIP_MARKER`` when anything was cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(CLIP_MARKER))] + CLIP_MARKER


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


def block_text(block: dict[str, Any]) -> str:
    """All the text a block shows (for budgets, and for tests that check nothing was lost)."""
    if "text" in block and isinstance(block["text"], dict):
        return str(block["text"].get("text", ""))
    if block.get("type") == "context":
        return "\n".join(str(e.get("text", "")) for e in block.get("elements", []))
    if "fields" in block:
        return "\n".join(str(f.get("text", "")) for f in block["fields"])
    return ""


# --- builders: each returns one block within Slack's limits ------------------------------------------------


def header(text: str) -> dict[str, Any]:
    """A header of plain text (not mrkdwn: nothing to escape, but never a Slack command either)."""
    shown = _COMMAND.sub("\u2039", text)
    return {"type": "header", "text": {"type": "plain_text", "text": clip(shown, MAX_HEADER_CHARS), "emoji": True}}


def section(markdown: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(markdown, MAX_SECTION_CHARS)}}


def fields(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """A section of labelled fields ("*label*" over its value); the value is mrkdwn, escaped by the caller."""
    return {
        "type": "section",
        "fields": [{"type": "mrkdwn", "text": clip(f"*{k}*\n{v}", MAX_FIELD_CHARS)} for k, v in pairs[:MAX_FIELDS]],
    }


def context(markdown: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(markdown, MAX_SECTION_CHARS)}]}


def divider() -> dict[str, Any]:
    return {"type": "divider"}
