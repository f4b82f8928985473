"""The evaluation's report: what one paired evaluation of a server measured on two SDK versions, as
`run.run_evaluation` builds it (the comparison's parts from `compare`), writes it (`evaluation.json` in the run
folder) and hands it to its readers: the CLI's table and `eval --json`, the threaded Slack reply (`notices`), and
the run report's `evaluation` part (`trigger`).

The shape is the one the report has had since it was written (release 48c8349 and before wrote it so):
`load_evaluation` reads a report of that shape and refuses anything else, naming the field; a field a later
version adds is kept. A task's expected tool arguments are the team's JSON, not part of this shape: the report
names a task's expectation in words (`expect`)."""

from __future__ import annotations

from typing import NotRequired

import pydantic
from typing_extensions import TypedDict

from watcher.core.checked import checked

_KEEP_UNKNOWN = pydantic.with_config(pydantic.ConfigDict(extra="allow"))
"""A later version may add fields: loading keeps them."""


class EvaluationReportError(ValueError):
    """An evaluation report (evaluation.json) that is not of the report's shape (names the field)."""


@_KEEP_UNKNOWN
class SideSummary(TypedDict):
    """One version's trials of a task (or of every complete pair), summed up (`compare.side_summary`)."""

    trials: int
    successes: int
    success_rate: float | None
    tool_calls: float
    """Mean tool calls per trial."""
    tools: dict[str, int]
    """Tool name → calls over the trials."""
    input_tokens: int
    output_tokens: int
    tokens_per_trial: float
    tool_errors: int
    tool_errors_per_trial: float
    steps: float
    seconds: float


@_KEEP_UNKNOWN
class TaskEntry(TypedDict):
    """One task: both versions over its complete pairs, whether it regressed and why."""

    id: str
    expect: str
    pairs: int
    baseline: SideSummary
    candidate: SideSummary
    regressed: bool
    why: list[str]


@_KEEP_UNKNOWN
class SuccessTest(TypedDict):
    """The exact McNemar test on the paired trials' successes."""

    test: str
    baseline_only: int
    candidate_only: int
    p_two_sided: float
    p_worse: float


@_KEEP_UNKNOWN
class PairedDelta(TypedDict):
    """One count's paired deltas (candidate − baseline) with their interval and sign test."""

    mean_delta: float | None
    total_delta: int
    ci95: list[float | None]
    interval: str
    sign_test_p: float
    increased: int
    decreased: int


@_KEEP_UNKNOWN
class Totals(TypedDict, total=False):
    """Every complete pair together (`compare.totals`); empty when nothing was compared."""

    pairs: int
    baseline: SideSummary
    candidate: SideSummary
    success: SuccessTest
    tool_calls: PairedDelta
    input_tokens: PairedDelta
    output_tokens: PairedDelta
    tool_errors: PairedDelta


@_KEEP_UNKNOWN
class NotMeasured(TypedDict):
    """Trials that were not measured and why; `task` "*" (no trials named): nothing was."""

    task: str
    reason: str
    trials: NotRequired[list[int]]
    """The trial numbers (from 1) of the task left out."""
    of: NotRequired[int]


@_KEEP_UNKNOWN
class TrialRecord(TypedDict):
    """One trial as it went (`harness.TrialResult`)."""

    task: str
    side: str
    index: int
    outcome: str
    why: str
    tool_calls: int
    tools: list[str]
    input_tokens: int
    output_tokens: int
    tool_errors: int
    steps: int
    seconds: float
    provider_seconds: float
    tool_seconds: float
    answer: str


class Comparison(TypedDict):
    """The parts `compare.compare` adds to the report."""

    verdict: str
    regressed_tasks: list[str]
    regressions: list[str]
    tasks: list[TaskEntry]
    totals: Totals


@_KEEP_UNKNOWN
class EvaluationReport(TypedDict):
    """One evaluation's report (see the module's doc). The keys are in the order `run_evaluation` writes them;
    the ones not required are written only when the run got that far."""

    server: str
    team: str
    sdk: str
    baseline_version: str
    candidate_version: str
    provider: str | None
    model: str | None
    trials: int | None
    started_at: str
    verdict: str
    """regression, no_regression, error or skipped."""
    error: str | None
    partial: bool
    stopped: str | None
    not_measured: list[NotMeasured]
    tasks: list[TaskEntry]
    totals: Totals
    regressions: list[str]
    run_dir: NotRequired[str]
    tasks_file: NotRequired[str]
    regressed_tasks: NotRequired[list[str]]
    stop_kind: NotRequired[str | None]
    tools: NotRequired[dict[str, list[str]]]
    """Side → the tool names its server listed."""
    trial_records: NotRequired[list[TrialRecord]]
    seconds: NotRequired[float]


_READER: pydantic.TypeAdapter[EvaluationReport] = pydantic.TypeAdapter(EvaluationReport)


def load_evaluation(data: object, where: str) -> EvaluationReport:
    """A decoded evaluation report, checked to be of the report's shape; `where` names it in an error.

    The document itself is handed back (its keys, its numbers as written, nothing added) once it fits."""
    if not isinstance(data, dict):
        raise EvaluationReportError(f"{where}: an evaluation report is a JSON object, not {type(data).__name__}")
    return checked(_READER, data, where, EvaluationReportError)
