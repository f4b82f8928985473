"""The backtest's answer: what replaying a period of an SDK's releases against one server found, as
`replay.build_answer` writes it, the store keeps it (the `backtests.answer` column, JSON) and every rendering
reads it (the terminal table, `--format json` and `markdown`, the page, the timeline picture, the Slack notice,
the clusters of several servers).

The shape is the one the answer has had since backtests were stored (release 48c8349 and before wrote it so):
`load_answer` reads a stored answer of that shape and refuses anything else, naming the field. A field a later
version adds is kept when loading, never dropped.
"""

from __future__ import annotations

import pydantic
from typing_extensions import TypedDict

from watcher.core.checked import checked

_KEEP_UNKNOWN = pydantic.with_config(pydantic.ConfigDict(extra="allow"))
"""A later version may add fields: loading keeps them."""


class AnswerError(ValueError):
    """A stored backtest answer that is not of the answer's shape (names the field)."""


@_KEEP_UNKNOWN
class ProblemEntry(TypedDict):
    """One problem a version showed (`problems.Problem` as JSON)."""

    kind: str
    key: str
    text: str
    evidence: str


@_KEEP_UNKNOWN
class SignatureEntry(TypedDict):
    """How a failing version failed (`clusters.signature.Signature`), kept so a repeat groups without the report."""

    key: str
    rule: str
    summary: str
    symbols: str
    """The symbols the signature names, one per line."""


@_KEEP_UNKNOWN
class VersionEntry(TypedDict):
    """One version of the period, in publication order, and how its run went."""

    version: str
    published: str
    prerelease: bool
    yanked: bool
    line: str
    verdict: str
    """pass, fail, error, or "not run"."""
    reused: bool
    seconds: float | None
    reasons: list[str]
    problems: list[ProblemEntry]
    run_dir: str | None
    signature: SignatureEntry | None


@_KEEP_UNKNOWN
class FindingEntry(TypedDict):
    """One problem followed along a release line (`analysis.Finding`): where it first showed and what shipped it."""

    line: str
    kind: str
    key: str
    text: str
    evidence: str
    status: str
    """warned, final-only, fixed or open (`analysis`)."""
    first_version: str
    first_published: str
    final_version: str | None
    final_published: str | None
    lead_days: int | None
    sentence: str


class GroupedFinding(FindingEntry):
    """Findings of one kind sharing line, status, first version and final, told as one (`render.grouped`)."""

    count: int


@_KEEP_UNKNOWN
class Cost(TypedDict):
    """What the backtest cost: versions in the period, runs made, results reused, seconds."""

    versions: int
    ran: int
    reused: int
    seconds: float


@_KEEP_UNKNOWN
class BacktestAnswer(TypedDict):
    """One backtest's answer (see the module's doc). The keys are in the order `build_answer` writes them."""

    id: int
    server: str
    team: str
    sdk: str
    registry: str
    package: str
    since: str
    until: str
    status: str
    """done or interrupted (a stored answer of a backtest still running says running)."""
    generated: str
    versions: list[VersionEntry]
    findings: list[FindingEntry]
    warned: list[FindingEntry]
    final_only: list[FindingEntry]
    not_run: list[str]
    undated: list[str]
    older_lines: list[str]
    cost: Cost


_READER: pydantic.TypeAdapter[BacktestAnswer] = pydantic.TypeAdapter(BacktestAnswer)


def load_answer(data: object, where: str) -> BacktestAnswer:
    """A decoded stored answer, checked to be of the answer's shape; `where` names it in an error.

    The document itself is handed back (its keys, its numbers as written, nothing added) once it fits."""
    if not isinstance(data, dict):
        raise AnswerError(f"{where}: a backtest answer is a JSON object, not {type(data).__name__}")
    return checked(_READER, data, where, AnswerError)
