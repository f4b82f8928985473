"""The answer of a backtest, per release line: where each problem first showed, the final that shipped it,
and the lead time a watcher of pre-releases would have had.

Within one line, in publication order, a problem's *episode* starts at the first version showing it after
one that did not (versions that could not judge its kind are neutral). The first final with the problem
ends it: the lead time is the days from the episode's first pre-release to that final. An episode that
starts at a final had no pre-release warning (`final-only`); one a later pre-release or final no longer
shows was caught and fixed before shipping (`fixed`); one still open at the end of the period is `open`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from watcher.backtest.problems import Judgement, Problem

WARNED, FINAL_ONLY, FIXED, OPEN = "warned", "final-only", "fixed", "open"


@dataclass(frozen=True)
class Point:
    """One replayed version with its verdict and what it showed."""

    version: str
    published: datetime
    prerelease: bool
    line: str
    verdict: str
    judgement: Judgement = field(default_factory=Judgement)


@dataclass(frozen=True)
class Finding:
    line: str
    problem: Problem
    status: str
    """warned, final-only, fixed or open."""
    first_version: str
    first_published: datetime
    final_version: str | None
    final_published: datetime | None
    lead_days: int | None
    """Days from the first pre-release that showed it to the final that shipped it (warned only)."""

    def sentence(self) -> str:
        return sentence(
            self.status,
            self.first_version,
            self.first_published,
            self.problem.text,
            self.line,
            self.lead_days,
            self.final_version,
        )


def sentence(
    status: str,
    first_version: str,
    first_published: datetime,
    text: str,
    line: str,
    lead_days: int | None,
    final_version: str | None,
) -> str:
    """ "2.0.0a1 (2026-06-11) would have told you <text> under 2.x: 47 days before 2.0.0" and its kin."""
    when = f"{first_version} ({first_published.date().isoformat()})"
    what = f"{text} under {line}"
    if status == WARNED:
        return f"{when} would have told you {what}: {lead_days} days before {final_version}"
    if status == FINAL_ONLY:
        return f"{when} shipped it without a pre-release showing it first: {what}"
    if status == FIXED:
        return f"{when} showed {what}; a later version no longer did (fixed before a final shipped it)"
    return f"{when} shows {what}; no final of the period has shipped it yet"


def _days(start: datetime, end: datetime) -> int:
    return (end.date() - start.date()).days


def _follow(line: str, points: list[Point], problem: Problem) -> Finding | None:
    """The first shipped episode of `problem` in one line's points, else the last caught one."""
    opened: Point | None = None
    caught: Finding | None = None
    for point in points:
        if problem.kind not in point.judgement.judged:
            continue
        has = any(p.kind == problem.kind and p.key == problem.key for p in point.judgement.problems)
        if has and not point.prerelease:
            first = opened or point
            warned = opened is not None
            return Finding(
                line,
                problem,
                WARNED if warned else FINAL_ONLY,
                first.version,
                first.published,
                point.version,
                point.published,
                _days(first.published, point.published) if warned else None,
            )
        if has and opened is None:
            opened = point
        elif not has and opened is not None:
            caught = Finding(line, problem, FIXED, opened.version, opened.published, None, None, None)
            opened = None
    if opened is not None:
        return Finding(line, problem, OPEN, opened.version, opened.published, None, None, None)
    return caught


def findings(points: list[Point]) -> list[Finding]:
    """Every problem of every line, oldest first."""
    found: list[Finding] = []
    lines: dict[str, list[Point]] = {}
    for point in sorted(points, key=lambda p: p.published):
        lines.setdefault(point.line, []).append(point)
    for line, members in lines.items():
        seen: dict[tuple[str, str], Problem] = {}
        for point in members:
            for problem in point.judgement.problems:
                seen.setdefault((problem.kind, problem.key), problem)
        for problem in seen.values():
            finding = _follow(line, members, problem)
            if finding is not None:
                found.append(finding)
    return sorted(found, key=lambda f: (f.first_published, f.line, f.problem.kind, f.problem.key))
