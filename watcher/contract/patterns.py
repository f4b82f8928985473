r"""Which way a JSON Schema `pattern` changed: decided by language inclusion, never guessed.

A JSON Schema pattern is an ECMA-262 regular expression that matches anywhere in the string unless
anchored. Each side is turned into the set of whole strings it admits (an unanchored side gets
`[\s\S]*`, any characters, line breaks included, on its open ends) and compared as finite automata
with `interegular`: old ⊆ new is a widening, new ⊆ old a narrowing, both an equivalent spelling,
neither a change both ways. A pattern the library cannot read exactly (lookarounds, back-references,
word boundaries, Unicode properties, an anchor inside the expression) gives "unknown": graded apart,
never called narrowed. `language` is that set of whole strings, for the other keywords' judgements.
"""

from __future__ import annotations

import functools
import re

import interegular
from interegular.fsm import FSM

WIDENED = "widened"
NARROWED = "narrowed"
EQUIVALENT = "equivalent"
CHANGED = "changed"
UNKNOWN = "unknown"

_UNREADABLE = re.compile(r"\(\?<?[=!]|\\[1-9]|\\k<")
"""Lookarounds and back-references: interegular reads some of them, but not as ECMA-262 means them."""


def pattern_direction(before: str, after: str) -> str:
    """widened | narrowed | equivalent | changed (neither contains the other) | unknown (undecidable here)."""
    old, new = language(before), language(after)
    if old is None or new is None:
        return UNKNOWN
    try:
        old_in_new = bool(old.issubset(new))  # type: ignore[no-untyped-call]
        new_in_old = bool(new.issubset(old))  # type: ignore[no-untyped-call]
    except Exception:  # the automata library's own limits (alphabets it cannot join): no verdict
        return UNKNOWN
    if old_in_new and new_in_old:
        return EQUIVALENT
    if old_in_new:
        return WIDENED
    return NARROWED if new_in_old else CHANGED


@functools.lru_cache(maxsize=512)
def language(pattern: str) -> FSM | None:
    """The automaton of whole strings `pattern` matches somewhere in; None when it cannot be read exactly."""
    if _UNREADABLE.search(pattern):
        return None
    alternatives = _top_level_alternatives(pattern)
    if alternatives is None:
        return None
    anchored = []
    for alternative in alternatives:
        body = _anchored(alternative)
        if body is None:
            return None
        anchored.append(body)
    try:
        return interegular.parse_pattern("|".join(f"(?:{a})" for a in anchored)).to_fsm()
    except Exception:  # interegular raises its own Unsupported / InvalidSyntax, and others on odd input
        return None


_ANY = r"[\s\S]*"


def _anchored(alternative: str) -> str | None:
    r"""One alternative as a whole-string expression: `^x$` → x, `^x` → x.*, `x$` → .*x, `x` → .*x.*, where the
    added `.*` is `[\s\S]*`: the match may start or end anywhere, after or before a line break too."""
    start = alternative.startswith("^")
    body = alternative[1:] if start else alternative
    end = body.endswith("$") and not _escaped(body, len(body) - 1)
    body = body[:-1] if end else body
    if _has_anchor(body):
        return None
    return ("" if start else _ANY) + f"(?:{body})" + ("" if end else _ANY)


def _escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index - backslashes - 1 >= 0 and text[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _scan(text: str) -> list[tuple[int, str, int, bool]]:
    """(index, character, group depth, inside a character class) of every unescaped character."""
    out = []
    depth, in_class, i = 0, False, 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
            out.append((i, char, depth, True))
        elif char == "[":
            in_class = True
            out.append((i, char, depth, False))
        else:
            if char == ")":
                depth -= 1
            out.append((i, char, depth, False))
            if char == "(":
                depth += 1
        i += 1
    return out


def _top_level_alternatives(pattern: str) -> list[str] | None:
    scanned = _scan(pattern)
    if any(depth < 0 for _, _, depth, _ in scanned):
        return None
    cuts = [i for i, char, depth, in_class in scanned if char == "|" and depth == 0 and not in_class]
    parts, start = [], 0
    for cut in cuts:
        parts.append(pattern[start:cut])
        start = cut + 1
    parts.append(pattern[start:])
    return parts


def _has_anchor(body: str) -> bool:
    return any(char in "^$" and not in_class for _, char, _, in_class in _scan(body))
