"""Reading the Markdown docs as a reader's tool would: headings, sections, tables and links (markdown-it-py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

_PARSER = MarkdownIt("commonmark").enable("table")


@dataclass
class Table:
    heading: str
    """The text of the nearest heading above the table."""
    line: int
    """1-based line of the table's first row in the file."""
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    """Cells as Markdown source (backticks kept, `\\|` unescaped)."""


@dataclass
class Link:
    target: str
    line: int


def doc_pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def tokens(path: Path) -> list[Token]:
    return _PARSER.parse(path.read_text(encoding="utf-8"))


def plain_text(inline: Token) -> str:
    """What a reader sees of an inline token: text and code spans, without the Markdown marks."""
    return "".join(child.content for child in inline.children or [] if child.type in ("text", "code_inline"))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces → hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    toks = tokens(path)
    for i, tok in enumerate(toks):
        if tok.type == "heading_open":
            base = slug(plain_text(toks[i + 1]))
            name, n = base, 0
            while name in found:
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def headings(path: Path) -> list[str]:
    """Each heading's Markdown source (backticks kept)."""
    toks = tokens(path)
    return [toks[i + 1].content for i, tok in enumerate(toks) if tok.type == "heading_open"]


def section(path: Path, heading: str) -> str:
    """The source text under the heading whose Markdown source is ``heading``, up to the next heading of the
    same or a higher level; "" when there is no such heading."""
    lines = path.read_text(encoding="utf-8").splitlines()
    toks = tokens(path)
    for i, tok in enumerate(toks):
        if tok.type == "heading_open" and toks[i + 1].content == heading and tok.map:
            start, level = tok.map[1], len(tok.markup)
            end = len(lines)
            for later in toks[i + 1 :]:
                if later.type == "heading_open" and len(later.markup) <= level and later.map:
                    end = later.map[0]
                    break
            return "\n".join(lines[start:end])
    return ""


def tables(path: Path) -> list[Table]:
    found: list[Table] = []
    heading = ""
    current: Table | None = None
    row: list[str] | None = None
    toks = tokens(path)
    for i, tok in enumerate(toks):
        if tok.type == "heading_open":
            heading = toks[i + 1].content
        elif tok.type == "table_open":
            current = Table(heading=heading, line=(tok.map[0] + 1) if tok.map else 0, header=[])
            found.append(current)
        elif tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open") and row is not None:
            row.append(toks[i + 1].content.strip())
        elif tok.type == "tr_close" and current is not None and row is not None:
            if current.header:
                current.rows.append(row)
            else:
                current.header = row
            row = None
    return found


def links(path: Path) -> list[Link]:
    found: list[Link] = []
    for tok in tokens(path):
        if tok.type != "inline":
            continue
        line = (tok.map[0] + 1) if tok.map else 0
        for child in tok.children or []:
            if child.type == "link_open":
                found.append(Link(str(child.attrs.get("href", "")), line))
            elif child.type == "image":
                found.append(Link(str(child.attrs.get("src", "")), line))
    return found


def code_spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)
