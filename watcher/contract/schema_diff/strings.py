r"""The strings a string node accepts, all its keywords in view, and whether one keyword of the other side
refuses any of them.

A node's strings are its `enum` / `const` values when it has them (each kept only when its own `pattern`
and lengths admit it), else the strings its `pattern` matches (unanchored: anywhere in the string) within
its `minLength` / `maxLength` and within the set its `format` names. A format is read as a superset of
what it names (a regular expression every string of the format matches: `uri` is `scheme ":" …`, so
never shorter than two characters), and a pattern or format that cannot be read exactly is read as every
string. So the set is never smaller than the node's, and "no string refused" is said only when proved.

`refuses_none(side, keyword, other)`: whether `other`'s `keyword` (minLength, maxLength, pattern, enum or
const) lets through every string of `side`. The walker asks it before calling a keyword's change a
narrowing (the old strings against the new keyword) or a widening (the new strings against the old one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from interegular.fsm import FSM

from watcher.contract.patterns import language
from watcher.contract.schema_diff.bounds import is_number
from watcher.contract.schema_diff.shapes import enum_values

FORMAT_SUPERSETS: dict[str, str] = {
    "uri": r"^[A-Za-z][A-Za-z0-9+.\-]*:[\s\S]*$",
    "iri": r"^[A-Za-z][A-Za-z0-9+.\-]*:[\s\S]*$",
    "email": r"^[\s\S]+@[\s\S]+$",
    "idn-email": r"^[\s\S]+@[\s\S]+$",
    "date": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "date-time": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+\-][0-9]{2}:[0-9]{2})$",
    "time": r"^[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+\-][0-9]{2}:[0-9]{2})$",
    "uuid": r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$",
    "ipv4": r"^[0-9]{1,3}(\.[0-9]{1,3}){3}$",
    "ipv6": r"^[0-9A-Fa-f:.]{2,}$",
    "hostname": r"^[A-Za-z0-9.\-]+$",
    "duration": r"^P[\s\S]+$",
}
"""For each format of JSON Schema 2020-12 whose strings have a shape: an expression every string of the
format matches (RFC 3986 / 3987 scheme ":", RFC 5321 local "@" domain, RFC 3339 dates and times, RFC 4122,
dotted quads, RFC 4291 hex groups, RFC 1123 labels, ISO 8601 "P…"). Formats that admit the empty string
(uri-reference, json-pointer, regex…) or any text are absent: they are read as every string."""

_SEARCH_LIMIT = 4096
"""Lengths (or distinct state sets) walked before an automaton question is left undecided."""


@dataclass(frozen=True, slots=True)
class StringSet:
    """What a string node accepts, as a superset: `values` when finite, else `automaton` (None: any string),
    always within `min_length` .. `max_length` (None: unbounded)."""

    values: tuple[str, ...] | None
    automaton: FSM | None
    min_length: int
    max_length: int | None


def is_string_node(node: dict[str, Any]) -> bool:
    """A node that accepts strings only: `type: string`, or untyped with string enum / const values."""
    if node.get("type") == "string":
        return True
    values = enum_values(node)
    return "type" not in node and bool(values) and all(isinstance(v, str) for v in values or ())


def string_set(node: dict[str, Any]) -> StringSet:
    low = node.get("minLength")
    high = node.get("maxLength")
    min_length = _ceil(low) if isinstance(low, int | float) and is_number(low) and low > 0 else 0
    max_length = int(high) if isinstance(high, int | float) and is_number(high) and high >= 0 else None
    pattern = node.get("pattern")
    own = language(pattern) if isinstance(pattern, str) else None
    values = enum_values(node)
    if values is not None:
        kept = tuple(
            v
            for v in dict.fromkeys(v for v in values if isinstance(v, str))
            if _within(len(v), min_length, max_length) and (own is None or bool(own.accepts(v)))
        )
        return StringSet(kept, None, min_length, max_length)
    automaton = own
    shape = FORMAT_SUPERSETS.get(node.get("format") or "")
    named = language(shape) if shape else None
    if named is not None:
        automaton = named if automaton is None else _intersection(automaton, named)
    return StringSet(None, automaton, min_length, max_length)


def refuses_none(side: StringSet, keyword: str, other: dict[str, Any]) -> bool:
    """Whether `other`'s `keyword` lets every string of `side` through (False when it refuses one or when
    that cannot be decided here)."""
    if keyword == "minLength":
        bound = other.get("minLength")
        if bound is None:
            return True
        if not is_number(bound):
            return False
        return not _some_length(side, side.min_length, min(_ceil(bound) - 1, _top(side.max_length)))
    if keyword == "maxLength":
        bound = other.get("maxLength")
        if bound is None:
            return True
        if not is_number(bound):
            return False
        if side.max_length is not None and side.max_length <= bound:
            return True
        return not _some_length(side, max(side.min_length, int(bound) + 1), side.max_length)
    if keyword == "pattern":
        pattern = other.get("pattern")
        if pattern is None:
            return True
        allowed = language(pattern) if isinstance(pattern, str) else None
        if allowed is None:
            return False
        if side.values is not None:
            return all(allowed.accepts(v) for v in side.values)
        return _empty_within(_difference(side.automaton, allowed), side)
    if keyword in ("enum", "const"):
        listed = enum_values(other)
        if listed is None:
            return True
        strings = [v for v in listed if isinstance(v, str)]
        if side.values is not None:
            return set(side.values) <= set(strings)
        if not strings:
            return not _some_length(side, side.min_length, side.max_length)
        return _empty_within(_difference(side.automaton, _literals(strings)), side)
    return False


def _some_length(side: StringSet, low: int, high: int | None) -> bool:
    """Whether `side` has a string whose length lies in low..high (undecidable: True, the cautious answer)."""
    if high is not None and high < low:
        return False
    if side.values is not None:
        return any(_within(len(v), low, high) for v in side.values)
    if side.automaton is None:
        return True
    found = has_length_between(side.automaton, low, high)
    return True if found is None else found


def _empty_within(automaton: FSM | None, side: StringSet) -> bool:
    """Whether `automaton` (None: not built) has no string within `side`'s lengths."""
    if automaton is None:
        return False
    found = has_length_between(automaton, side.min_length, side.max_length)
    return found is False


def has_length_between(automaton: FSM, low: int, high: int | None) -> bool | None:
    """Whether the automaton accepts a string whose length is in low..high (high None: unbounded); None when
    that is not decided within the search limit.

    The set of states the strings of each length reach, length after length, until a set comes back: from
    there the sets repeat with that period, so every length maps onto one already walked."""
    live = _live_states(automaton)
    walked: list[frozenset[Any]] = []
    first_seen: dict[frozenset[Any], int] = {}
    current = frozenset({automaton.initial} & live)
    cycle_start: int | None = None
    while current and (high is None or len(walked) <= high):
        if current in first_seen:
            cycle_start = first_seen[current]
            break
        if len(walked) >= _SEARCH_LIMIT:
            return None
        first_seen[current] = len(walked)
        walked.append(current)
        current = frozenset(
            target for state in current for target in automaton.map.get(state, {}).values() if target in live
        )
    accepting = [bool(states & automaton.finals) for states in walked]
    if any(accepting[length] for length in range(low, len(walked)) if high is None or length <= high):
        return True
    if cycle_start is None:
        return False
    period = len(walked) - cycle_start
    first = max(low, len(walked))
    last = first + period - 1 if high is None else min(high, first + period - 1)
    return any(accepting[cycle_start + (length - cycle_start) % period] for length in range(first, last + 1))


def _live_states(automaton: FSM) -> frozenset[Any]:
    """States from which a final state can be reached."""
    incoming: dict[Any, set[Any]] = {}
    for state, moves in automaton.map.items():
        for target in moves.values():
            incoming.setdefault(target, set()).add(state)
    live = set(automaton.finals)
    frontier = list(live)
    while frontier:
        for source in incoming.get(frontier.pop(), ()):
            if source not in live:
                live.add(source)
                frontier.append(source)
    return frozenset(live)


def _intersection(a: FSM, b: FSM) -> FSM:
    try:
        joined: FSM = a & b
    except Exception:  # alphabets the library cannot join: the pattern alone is still a superset
        return a
    return joined


def _difference(a: FSM | None, b: FSM | None) -> FSM | None:
    """a minus b (a None: every string); None when it cannot be built."""
    if b is None:
        return None
    try:
        rest: FSM = b.everythingbut() if a is None else a - b  # type: ignore[no-untyped-call]
    except Exception:  # the automata library's own limits: undecided
        return None
    return rest


def _literals(strings: list[str]) -> FSM | None:
    return language("^(?:" + "|".join(re.escape(s) for s in strings) + ")$")


def _within(length: int, low: int, high: int | None) -> bool:
    return length >= low and (high is None or length <= high)


def _ceil(bound: float) -> int:
    whole = int(bound)
    return whole if whole == bound else whole + 1


def _top(limit: int | None) -> int:
    return limit if limit is not None else 1 << 62
