"""Earliest-removal dates for registry rows: the window's end, the revision that may remove, days left, basis.

The "Earliest removal" cell is free text. Shapes understood (case-insensitive, a trailing period allowed):

- ``First revision released on or after <YYYY-MM-DD>``: the window ends on that date.
- ``Follows <feature> (…)``: whatever that feature resolves to (unknown feature or a cycle: unresolved).
- ``<N> months after SEP-<n> reaches Final`` (N in digits or words): the SEP's Final date + N months.
- an empty cell: the policy, 12 months after the release of the "Deprecated in" revision.

Anything else is unresolved, with "unknown shape: <text>" as its basis: never guessed. So is a row with a
date that does not exist (``2025-11-31``) in its "Deprecated in", "Earliest removal" or "Removed in" cell: its
basis names the row's line, the cell and the date. The earliest removal
is the first revision released (actual) or projected (calendar) on or after the window's end. The policy's
floors are checked against the window's start (the release of the "Deprecated in" revision): under 90 days
is flagged inconsistent; under 12 months is flagged as needing a security exception.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TypedDict

from watcher.spec.calendar import (
    ReleaseCalendar,
    ReleaseSlot,
    add_months,
    as_calendar,
    first_release_on_or_after,
)
from watcher.spec.registry import Registry, RegistryRow, State, normalise
from watcher.spec.revisions import SpecRevision, release_of
from watcher.spec.settings import Calendar as CalendarSettings

POLICY_MONTHS = 12
SECURITY_FLOOR_DAYS = 90

ON_OR_AFTER = re.compile(
    r"^first (?:specification )?revision released(?: as current)? on or after (?P<date>\d{4}-\d{2}-\d{2})\.?$",
    re.IGNORECASE,
)
FOLLOWS = re.compile(r"^follows\s+(?P<name>.+?)(?:\s*\((?P<note>[^()]*)\))?\.?$", re.IGNORECASE)
MONTHS_AFTER_SEP = re.compile(
    r"^(?P<count>[a-z0-9]+(?:[- ][a-z]+)?)\s+months?\s+after\s+SEP[- ]?(?P<sep>\d+)\s+reaches\s+final\.?$",
    re.IGNORECASE,
)

DATE_SHAPED = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
DATE_CELLS = (
    ("Deprecated in", "deprecated_in"),
    ("Earliest removal", "earliest_removal_text"),
    ("Removed in", "removed_in"),
)

_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60}


class DeprecationRow(TypedDict):
    """One feature of the spec's deprecated-features registry with its computed earliest removal: a
    ``deprecations --json`` object, kept in the store (``spec.registry.last_good``) and read by the spec alerts,
    the digest, the pages and the readiness view."""

    feature: str
    state: State
    deprecated_in: str
    sep: str
    migration: str
    earliest_removal_text: str
    window_starts: str | None
    window_ends: str | None
    earliest_removal: str | None
    earliest_removal_revision: str | None
    earliest_removal_projected: bool | None
    days_left: int | None
    basis: str
    resolved: bool
    shape: str
    flags: list[str]
    feature_link: str | None
    sep_number: int | None
    sep_kind: str | None
    sep_link: str | None
    removed_in: str | None
    line: int
    key: str


def count_of(text: str) -> int | None:
    """ "3", "three", "Twenty-four" → the number; None when it is not a number we can read."""
    word = text.strip().casefold().replace(" ", "-")
    if word.isdigit():
        return int(word)
    if word in _UNITS:
        return _UNITS.index(word)
    tens, _, unit = word.partition("-")
    if tens in _TENS and (not unit or unit in _UNITS[1:10]):
        return _TENS[tens] + (_UNITS.index(unit) if unit else 0)
    return None


def impossible_date(row: RegistryRow) -> str | None:
    """The first YYYY-MM-DD in a date cell of the row that is no date (2025-11-31), as a problem naming it."""
    for title, attribute in DATE_CELLS:
        for text in DATE_SHAPED.findall(getattr(row, attribute)):
            try:
                date.fromisoformat(text)
            except ValueError as exc:
                return f'line {row.line}, cell "{title}": {text} is not a date ({exc})'
    return None


def needed_seps(rows: Sequence[RegistryRow]) -> set[int]:
    """SEPs whose Final date some row's earliest removal depends on."""
    return {int(m.group("sep")) for r in rows if (m := MONTHS_AFTER_SEP.match(r.earliest_removal_text.strip()))}


@dataclass(frozen=True)
class _Window:
    ends: date | None
    basis: str
    shape: str
    slot: ReleaseSlot | None = None
    """Set for shapes that fix the removal revision themselves (Follows, Removed in)."""


class _Resolver:
    def __init__(
        self,
        rows: Sequence[RegistryRow],
        calendar: ReleaseCalendar,
        releases: Sequence[SpecRevision],
        sep_final: Mapping[int, date],
        sep_errors: Mapping[int, str],
        today: date,
    ) -> None:
        self.rows = list(rows)
        self.calendar = calendar
        self.releases = list(releases)
        self.sep_final = sep_final
        self.sep_errors = sep_errors
        self.today = today
        self._memo: dict[int, _Window] = {}

    # -- the window's start ------------------------------------------------------------------------------

    def start(self, row: RegistryRow) -> tuple[date | None, str]:
        revision = row.deprecated_in.strip()
        try:
            revision_date = date.fromisoformat(revision)
        except ValueError:
            return None, f"'Deprecated in' is not a revision date: {revision or '(empty)'}"
        release = release_of(self.releases, revision)
        if release is not None:
            return release.released, f"revision {revision} released {release.released.isoformat()}"
        return revision_date, f"revision {revision} (no release found; using its date)"

    # -- the window's end, per shape ---------------------------------------------------------------------

    def window(self, row: RegistryRow, visiting: tuple[RegistryRow, ...] = ()) -> _Window:
        if id(row) in self._memo:
            return self._memo[id(row)]
        result = self._window(row, visiting)
        self._memo[id(row)] = result
        return result

    def _window(self, row: RegistryRow, visiting: tuple[RegistryRow, ...]) -> _Window:
        text = " ".join(row.earliest_removal_text.split())
        if problem := impossible_date(row):
            return _Window(None, problem, "impossible-date")
        if row.state == "removed" and row.removed_in:
            return self._removed_in(row)
        if not text:
            start, start_basis = self.start(row)
            if start is None:
                return _Window(None, f"empty cell → policy, but {start_basis}", "policy")
            ends = add_months(start, POLICY_MONTHS)
            basis = f"empty cell → policy: {POLICY_MONTHS} months after {start_basis} = {ends.isoformat()}"
            return _Window(ends, basis, "policy")
        if match := ON_OR_AFTER.match(text):
            try:
                ends = date.fromisoformat(match.group("date"))
            except ValueError:
                return _Window(None, f"not a date in: {text}", "on-or-after")
            return _Window(ends, f"window ends {ends.isoformat()} (stated)", "on-or-after")
        if match := MONTHS_AFTER_SEP.match(text):
            return self._months_after_sep(match, text)
        if match := FOLLOWS.match(text):
            return self._follows(row, match, visiting)
        return _Window(None, f"unknown shape: {text}", "unknown")

    def _months_after_sep(self, match: re.Match[str], text: str) -> _Window:
        months = count_of(match.group("count"))
        number = int(match.group("sep"))
        if months is None:
            return _Window(None, f"unknown shape: {text} (cannot read the number {match.group('count')!r})", "unknown")
        final = self.sep_final.get(number)
        if final is None:
            reason = self.sep_errors.get(number, f"SEP-{number}: Final date unknown")
            return _Window(None, f"{months} months after SEP-{number} reaches Final, but {reason}", "months-after-sep")
        ends = add_months(final, months)
        basis = f"SEP-{number} reached Final {final.isoformat()} + {months} months = {ends.isoformat()}"
        return _Window(ends, basis, "months-after-sep")

    def _follows(self, row: RegistryRow, match: re.Match[str], visiting: tuple[RegistryRow, ...]) -> _Window:
        name = match.group("name")
        target = self._find(name) or (self._find(f"{name} ({match.group('note')})") if match.group("note") else None)
        if target is None:
            return _Window(None, f"follows {name!r}, which is not a feature in the registry", "follows")
        if target is row or target in visiting:
            chain = " → ".join(r.feature for r in (*visiting, row, target))
            return _Window(None, f"follows {target.feature!r}: a cycle ({chain})", "follows")
        followed = self.window(target, (*visiting, row))
        if followed.ends is None:
            return _Window(None, f"follows {target.feature!r}, which is unresolved ({followed.basis})", "follows")
        slot = followed.slot or self.first_slot(followed.ends)
        return _Window(followed.ends, f"follows {target.feature}: {followed.basis}", "follows", slot)

    def _removed_in(self, row: RegistryRow) -> _Window:
        revision = row.removed_in.strip()
        release = release_of(self.releases, revision)
        if release is not None:
            slot = ReleaseSlot(release.released, actual=True, revision=revision, note=f"removed in {revision}")
            return _Window(release.released, f"removed in revision {revision}", "removed-in", slot)
        try:
            day = date.fromisoformat(revision)
        except ValueError:
            return _Window(None, f"'Removed in' is not a revision date: {revision}", "removed-in")
        slot = ReleaseSlot(day, actual=False, revision=revision, note=f"removed in {revision} (not released yet)")
        return _Window(day, f"removed in revision {revision} (not released yet)", "removed-in", slot)

    def _find(self, name: str) -> RegistryRow | None:
        wanted = normalise(name)
        matches = [r for r in self.rows if normalise(r.feature) == wanted]
        matches.sort(key=lambda r: r.state != "deprecated")
        return matches[0] if matches else None

    def first_slot(self, day: date) -> ReleaseSlot | None:
        return first_release_on_or_after(self.calendar, self.releases, day, self.today)

    # -- one row ------------------------------------------------------------------------------------------

    def row_json(self, row: RegistryRow) -> DeprecationRow:
        window = self.window(row)
        start, _ = self.start(row)
        slot = None
        basis = window.basis
        if window.ends is not None:
            slot = window.slot or self.first_slot(window.ends)
            if window.shape != "removed-in":
                if slot is None:
                    basis += "; no release projected within the calendar's horizon"
                else:
                    basis += f"; first release on or after it: {slot.date.isoformat()} ({_describe(slot)})"
        resolved = slot is not None
        flags = self.flags(row, start, window.ends)
        return {
            "feature": row.feature,
            "state": row.state,
            "deprecated_in": row.deprecated_in,
            "sep": row.sep,
            "migration": row.migration,
            "earliest_removal_text": row.earliest_removal_text,
            "window_starts": start.isoformat() if start else None,
            "window_ends": window.ends.isoformat() if window.ends else None,
            "earliest_removal": slot.date.isoformat() if slot else None,
            "earliest_removal_revision": slot.revision if slot else None,
            "earliest_removal_projected": (not slot.actual) if slot else None,
            "days_left": (slot.date - self.today).days if slot else None,
            "basis": basis,
            "resolved": resolved,
            "shape": window.shape,
            "flags": flags,
            "feature_link": row.feature_link,
            "sep_number": row.sep_number,
            "sep_kind": row.sep_kind,
            "sep_link": row.sep_link,
            "removed_in": row.removed_in or None,
            "line": row.line,
            "key": row.key,
        }

    def flags(self, row: RegistryRow, start: date | None, ends: date | None) -> list[str]:
        if start is None or ends is None or row.state == "removed":
            return []
        days = (ends - start).days
        if days < SECURITY_FLOOR_DAYS:
            return [
                f"inconsistent: the window is {days} days ({start.isoformat()} → {ends.isoformat()}), "
                f"shorter than the policy's {SECURITY_FLOOR_DAYS}-day floor"
            ]
        if ends < add_months(start, POLICY_MONTHS):
            return [
                f"window shorter than {POLICY_MONTHS} months ({days} days from {start.isoformat()}): "
                "allowed only as a security exception"
            ]
        return []


def _describe(slot: ReleaseSlot) -> str:
    return slot.note if slot.actual else f"projected: {slot.note}"


def compute_deprecations(
    rows: Registry | Sequence[RegistryRow],
    calendar: ReleaseCalendar | CalendarSettings,
    releases: Sequence[SpecRevision],
    sep_final: Mapping[int, date | str],
    today: date,
    sep_errors: Mapping[int, str] | None = None,
) -> list[DeprecationRow]:
    """One dict per row (the ``deprecations --json`` objects), in registry order: Deprecated, then Removed.

    ``sep_final``: SEP number → the date it reached Final (date or ISO text); ``sep_errors``: why a SEP's
    date is unknown, shown in the basis of the rows that need it.
    """
    row_list = rows.rows if isinstance(rows, Registry) else list(rows)
    finals = {int(n): d if isinstance(d, date) else date.fromisoformat(d) for n, d in sep_final.items()}
    resolver = _Resolver(row_list, as_calendar(calendar), releases, finals, sep_errors or {}, today)
    return [resolver.row_json(row) for row in row_list]
