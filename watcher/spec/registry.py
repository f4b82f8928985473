"""The spec's deprecated-features registry (``deprecated.mdx``) → typed rows.

The page is MDX: YAML front matter, JSX-ish lines such as ``<div id="…" />``, prose, and two GFM
tables under the headings "Deprecated" and "Removed". markdown-it-py (CommonMark + the table rule)
does the parsing; this module only walks its tokens. Columns are found by their header *name*, so
their order may change; a missing or renamed column, a table that no longer parses, or a row with
the wrong number of cells is a ``RegistryFormatError`` — never an empty list of deprecations.
"""

from __future__ import annotations

import hashlib
import importlib
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

from watcher.core.errors import RegistryFormatError as RegistryFormatError

State = Literal["deprecated", "removed"]

# Header name (normalised: lower case, single spaces) → field of RegistryRow.
COLUMNS: dict[str, str] = {
    "feature": "feature",
    "deprecation sep": "sep",
    "deprecated in": "deprecated_in",
    "migration path": "migration",
    "earliest removal": "earliest_removal_text",
    "removed in": "removed_in",
}
REQUIRED: dict[State, tuple[str, ...]] = {
    "deprecated": ("feature", "deprecation sep", "deprecated in", "migration path", "earliest removal"),
    # The Removed table has had no rows yet; the policy only says a row "moves" there with a link to the
    # changelog, so only the feature column is required and the others are read when present.
    "removed": ("feature",),
}
TITLES = {
    "feature": "Feature",
    "deprecation sep": "Deprecation SEP",
    "deprecated in": "Deprecated in",
    "migration path": "Migration path",
    "earliest removal": "Earliest removal",
}
SECTIONS: dict[str, State] = {"deprecated": "deprecated", "removed": "removed"}


@dataclass(frozen=True)
class RegistryRow:
    state: State
    feature: str
    feature_link: str | None
    sep: str
    """The deprecation SEP or PR as written, e.g. "SEP-2577" or "PR #2858"."""
    sep_kind: Literal["sep", "pr"] | None
    sep_number: int | None
    sep_link: str | None
    deprecated_in: str
    migration: str
    earliest_removal_text: str
    removed_in: str = ""
    line: int = 0
    """1-based line of the row in the page."""
    extra: dict[str, str] = field(default_factory=dict)
    """Columns we do not know, by header as written (kept, shown, never required)."""

    @property
    def key(self) -> str:
        return feature_key(self.feature)


@dataclass(frozen=True)
class Registry:
    deprecated: list[RegistryRow]
    removed: list[RegistryRow]
    digest: str
    """sha256 of the page text, for logs and state."""

    @property
    def rows(self) -> list[RegistryRow]:
        return [*self.deprecated, *self.removed]

    def to_json(self) -> dict[str, Any]:
        return {
            "deprecated": [asdict(r) for r in self.deprecated],
            "removed": [asdict(r) for r in self.removed],
            "digest": self.digest,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Registry:
        return cls(
            deprecated=[RegistryRow(**r) for r in data["deprecated"]],
            removed=[RegistryRow(**r) for r in data["removed"]],
            digest=data["digest"],
        )


def feature_key(feature: str) -> str:
    """A stable identifier for a feature name: lower case, runs of other characters → "-"."""
    return re.sub(r"[^a-z0-9]+", "-", feature.casefold()).strip("-") or "feature"


def normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


_MD = MarkdownIt("commonmark").enable("table")


def parse_registry(text: str, source: str = "deprecated.mdx") -> Registry:
    """Parse the page; raises RegistryFormatError naming the source, the line and the problem."""
    tokens = _MD.parse(_blank_front_matter(text))
    lines = text.splitlines()
    sections = _sections(tokens)
    found: dict[State, list[RegistryRow]] = {}
    for heading, state in SECTIONS.items():
        if heading not in sections:
            raise RegistryFormatError(
                source,
                None,
                f'no "## {heading.title()}" section (headings found: {", ".join(repr(h) for h in sections) or "none"})',
            )
        line, body = sections[heading]
        _refuse_broken_tables(body, source, heading)
        tables = _tables(body)
        if not tables and state == "deprecated":
            raise RegistryFormatError(source, line, f'the "{heading.title()}" section has no table')
        rows: list[RegistryRow] = []
        for table in tables:
            rows.extend(_read_table(table, state, source, lines))
        found[state] = rows
    _refuse_duplicates([*found["deprecated"], *found["removed"]], source)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Registry(deprecated=found["deprecated"], removed=found["removed"], digest=digest)


def inline_text(token: Token, links: list[str] | None = None) -> str:
    """Reduce an inline token to plain text: code spans and links become their text; hrefs go to ``links``."""
    return children_text(token.children or [], links)


def children_text(children: Sequence[Token], links: list[str] | None = None) -> str:
    parts: list[str] = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "link_open" and links is not None:
            links.append(str(child.attrs.get("href", "")))
        elif child.type == "image":
            parts.append(child.content)
    return " ".join("".join(parts).split())


# --- document structure --------------------------------------------------------------------------------


def _blank_front_matter(text: str) -> str:
    """Blank out a leading YAML front matter block (keeping line numbers), so it is not read as a heading."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            return "\n" * end + "\n" + "\n".join(lines[end + 1 :])
    return text


def _sections(tokens: Sequence[Token]) -> dict[str, tuple[int, list[Token]]]:
    """Heading text (normalised) → (1-based line, the tokens up to the next heading of the same or higher level)."""
    out: dict[str, tuple[int, list[Token]]] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type != "heading_open":
            i += 1
            continue
        level = int(token.tag[1])
        name = normalise(inline_text(tokens[i + 1]))
        line = (token.map[0] + 1) if token.map else 0
        j = i + 3
        while j < len(tokens) and not (tokens[j].type == "heading_open" and int(tokens[j].tag[1]) <= level):
            j += 1
        out.setdefault(name, (line, list(tokens[i + 3 : j])))
        i += 3
    return out


def _refuse_broken_tables(body: Sequence[Token], source: str, heading: str) -> None:
    """Pipe rows that markdown-it read as a paragraph mean a table that no longer parses."""
    for opening, token in zip(body, body[1:], strict=False):
        if opening.type == "paragraph_open" and any(ln.lstrip().startswith("|") for ln in token.content.splitlines()):
            line = (token.map[0] + 1) if token.map else None
            raise RegistryFormatError(
                source,
                line,
                f'a table in the "{heading.title()}" section no longer parses as a table '
                "(header, delimiter row and rows must agree; a blank line ends a table)",
            )


@dataclass
class _Table:
    line: int
    header: list[Token]
    rows: list[tuple[int, list[Token]]]


def _tables(body: Sequence[Token]) -> list[_Table]:
    tables: list[_Table] = []
    current: _Table | None = None
    row: list[Token] | None = None
    row_line = 0
    in_head = False
    for token in body:
        if token.type == "table_open":
            current = _Table(line=(token.map[0] + 1) if token.map else 0, header=[], rows=[])
        elif token.type == "thead_open":
            in_head = True
        elif token.type == "thead_close":
            in_head = False
        elif token.type == "tr_open" and current is not None:
            row = []
            row_line = (token.map[0] + 1) if token.map else 0
        elif token.type == "inline" and row is not None:
            row.append(token)
        elif token.type == "tr_close" and current is not None and row is not None:
            if in_head:
                current.header = row
            else:
                current.rows.append((row_line, row))
            row = None
        elif token.type == "table_close" and current is not None:
            tables.append(current)
            current = None
    return tables


def _read_table(table: _Table, state: State, source: str, lines: list[str]) -> list[RegistryRow]:
    headers = [inline_text(cell) for cell in table.header]
    names = [normalise(h) for h in headers]
    for name in names:
        if names.count(name) > 1:
            raise RegistryFormatError(source, table.line, f"column {name!r} appears twice")
    missing = [c for c in REQUIRED[state] if c not in names]
    if missing:
        raise RegistryFormatError(
            source,
            table.line,
            f"the {state.title()} table has no column {', '.join(repr(TITLES[m]) for m in missing)} "
            f"(columns: {', '.join(repr(h) for h in headers)})",
        )
    rows = []
    for line, cells in table.rows:
        _check_cell_count(lines, line, len(headers), source)
        values: dict[str, Any] = {"state": state, "line": line, "extra": {}}
        feature_links: list[str] = []
        sep_links: list[str] = []
        for header, name, cell in zip(headers, names, cells, strict=True):
            column = COLUMNS.get(name)
            if column == "feature":
                values["feature"] = inline_text(cell, feature_links)
            elif column == "sep":
                values["sep"] = inline_text(cell, sep_links)
            elif column is not None:
                values[column] = inline_text(cell)
            else:
                values["extra"][header] = inline_text(cell)
        if not values["feature"]:
            raise RegistryFormatError(source, line, "a row has an empty Feature cell")
        kind, number = _sep_reference(values.get("sep", ""), sep_links)
        rows.append(
            RegistryRow(
                state=state,
                feature=values["feature"],
                feature_link=feature_links[0] if feature_links else None,
                sep=values.get("sep", ""),
                sep_kind=kind,
                sep_number=number,
                sep_link=sep_links[0] if sep_links else None,
                deprecated_in=values.get("deprecated_in", ""),
                migration=values.get("migration", ""),
                earliest_removal_text=values.get("earliest_removal_text", ""),
                removed_in=values.get("removed_in", ""),
                line=line,
                extra=values["extra"],
            )
        )
    return rows


def _sep_reference(text: str, links: list[str]) -> tuple[Literal["sep", "pr"] | None, int | None]:
    if match := re.search(r"\bSEP[- ]?(\d+)", text, re.IGNORECASE):
        return "sep", int(match.group(1))
    if match := re.search(r"\b(?:PR|pull request)\s*#?\s*(\d+)", text, re.IGNORECASE):
        return "pr", int(match.group(1))
    for link in links:
        if match := re.search(r"/pull/(\d+)", link):
            return "pr", int(match.group(1))
    return None, None


def _refuse_duplicates(rows: list[RegistryRow], source: str) -> None:
    seen: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row.state, row.key)
        if key in seen:
            raise RegistryFormatError(
                source, row.line, f"feature {row.feature!r} is listed twice (first on line {seen[key]})"
            )
        seen[key] = row.line


# markdown-it fills short rows with empty cells and drops surplus ones, which would turn a broken row into
# an "empty cell" (and so a policy-derived date). Count the cells of the raw line with the table rule's own
# splitter so that our count agrees with the parser's notion of a cell.
def _load_splitter() -> Callable[[str], list[str]] | None:
    try:
        splitter: Callable[[str], list[str]] = importlib.import_module("markdown_it.rules_block.table").escapedSplit
        return splitter
    except (ImportError, AttributeError):  # a future markdown-it may move it: the check is then skipped
        return None


_SPLIT = _load_splitter()


def _check_cell_count(lines: list[str], line: int, expected: int, source: str) -> None:
    if _SPLIT is None or not (0 < line <= len(lines)):
        return
    cells = _SPLIT(lines[line - 1].strip())
    if cells and cells[0] == "":
        cells.pop(0)
    if cells and cells[-1] == "":
        cells.pop()
    if len(cells) != expected:
        raise RegistryFormatError(source, line, f"the row has {len(cells)} cells but the header has {expected}")
