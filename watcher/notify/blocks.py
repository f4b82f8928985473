"""Slack's message limits and the small Block Kit layer that every capability builds its notices from.

The builders take ``Mrkdwn`` only (``watcher.core.text``): text we wrote, into which outside text can be
put only escaped (``escape``, or ``Mrkdwn("…{}…").format(outside)``), so no registry, team file, server
or suite can make a link, a mention or a Slack command of ours. A link is made only by ``link``, of an
address ``safe_url`` accepts. Every mrkdwn text object is sent ``verbatim``: Slack does not turn a bare
address, ``@here`` or ``#channel`` written in outside text into a link or a mention either.

Text over a limit is either clipped with the one marker ``CLIP_MARKER`` (``clip``, and every builder
below) or, where nothing may be lost, split first into pieces that fit (``split_text``).

Every message leaves through ``guard`` (the Slack sinks call it): whatever a builder let through, no Slack
command (``<!channel>``, ``<!here>``, ``<!subteam^…>``, ``<@user>``, ``<#channel>``) survives it, since no
notice of ours ever means to ping anyone.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar, overload

from watcher.core.text import Mrkdwn, shown

__all__ = ["Mrkdwn"]

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
    "pass": Mrkdwn(":white_check_mark:"),
    "fail": Mrkdwn(":x:"),
    "error": Mrkdwn(":warning:"),
    "pending": Mrkdwn(":hourglass_flowing_sand:"),
    "not-run": Mrkdwn(":heavy_minus_sign:"),
}
"""Slack emoji for a suite verdict (and the digest's "not judged yet" states)."""


def escape(text: object) -> Mrkdwn:
    """Outside text (or any value) as mrkdwn: Slack's &, < and > escaped; ours (already ``Mrkdwn``) as it is."""
    return Mrkdwn.escape(text)


_URL = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%!$'()*+,;=:@/?#-]*)?")
_COMMAND = re.compile(r"<(?=[!@#])")


def safe_url(url: str) -> str | None:
    """``url`` when it may be the target of a mrkdwn link (http or https, no ``<``, ``>``, ``|``, ``&``,
    space or quote that could end or disguise the link); None otherwise."""
    return url if _URL.fullmatch(url) else None


def link(url: str, label: object) -> Mrkdwn:
    """A link of ours: ``<url|label>`` with the label escaped (and no ``|`` to end it early); only the
    label, as text, when ``safe_url`` refuses the address."""
    shown_label = escape(label).replace("|", "\N{BROKEN BAR}")
    target = safe_url(url)
    if target is None:
        return shown_label
    return Mrkdwn("<{}|{}>").format(Mrkdwn(target), shown_label)  # a checked address: nothing to escape


def defuse(text: str) -> str:
    """``text`` with every Slack command (``<!…>``, ``<@…>``, ``<#…>``) turned into visible text."""
    return _COMMAND.sub("&lt;", text)


def for_console(text: str) -> str:
    """A notice's text for a terminal: Slack's three entities shown as the characters they stand for, and no
    control character from outside (a tag could carry terminal escape sequences): ``shown``, line breaks and
    tabs kept."""
    plain = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return shown(plain, keep="\n\t")


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


Text = TypeVar("Text", str, Mrkdwn)


@overload
def clip(text: Mrkdwn, limit: int) -> Mrkdwn: ...
@overload
def clip(text: str, limit: int) -> str: ...
def clip(text: str, limit: int) -> str:
    """``text`` shortened to ``limit`` characters, ending in ``CLIP_MARKER`` when anything was cut (a cut
    inside one of our links leaves text, never a link)."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(CLIP_MARKER))] + CLIP_MARKER


def split_text(text: Mrkdwn, limit: int = MAX_SECTION_CHARS) -> list[Mrkdwn]:
    """Pieces of at most ``limit`` characters: at line breaks where possible, else at spaces, else hard.
    A piece of our text is ours (a cut inside one of our links leaves text, never a new link)."""
    return [Mrkdwn(piece) for piece in _pieces(str(text), limit)]


def _pieces(text: str, limit: int) -> list[str]:
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


def plain(text: str) -> dict[str, Any]:
    """A plain_text object (a header, a button, a modal's label): shown as written, so nothing to escape,
    but a look-alike ``‹`` opens whatever would read as a Slack command or a link."""
    return {"type": "plain_text", "text": text.replace("<", "\u2039"), "emoji": True}


def header(text: str) -> dict[str, Any]:
    """A header of plain text (any text, ours or outside)."""
    return {"type": "header", "text": plain(clip(text, MAX_HEADER_CHARS))}


def _mrkdwn(text: Mrkdwn, limit: int) -> dict[str, Any]:
    if not isinstance(text, Mrkdwn):  # mypy refuses a str here; this stops one that slipped past it
        raise TypeError(f"Block Kit text must be Mrkdwn (escape outside text), not {type(text).__name__}")
    return {"type": "mrkdwn", "text": clip(text, limit), "verbatim": True}


def section(markdown: Mrkdwn) -> dict[str, Any]:
    return {"type": "section", "text": _mrkdwn(markdown, MAX_SECTION_CHARS)}


def fields(pairs: list[tuple[str, Mrkdwn]]) -> dict[str, Any]:
    """A section of labelled fields ("*label*" over its value); a label is escaped like outside text."""
    return {
        "type": "section",
        "fields": [_mrkdwn(Mrkdwn("*{}*\n{}").format(k, v), MAX_FIELD_CHARS) for k, v in pairs[:MAX_FIELDS]],
    }


def context(markdown: Mrkdwn) -> dict[str, Any]:
    return {"type": "context", "elements": [_mrkdwn(markdown, MAX_SECTION_CHARS)]}


def divider() -> dict[str, Any]:
    return {"type": "divider"}
