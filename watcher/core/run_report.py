"""The run report: what one check of one server against one SDK version found, as the stages write it, the store
keeps it and every reader (the run page, the notices, the evaluation trigger, the digest, the backtest, the
clusters, the status API) reads it; a CI run's artifact is one too (`mcp-watcher check --json`).

It is the JSON document that is stored, typed: the stages build it key by key while the run goes on (a report of
a run that stopped early has only some of its parts), so each part is typed and every part is optional. It
carries its shape's version (`report_version`); `load_report` reads every version written so far, so reports
stored and CI artifacts written by an older release still load, and refuses anything else naming the field.

Version 1 (up to e8aec50) had no `report_version`: its shape is version 2's, so it loads as it is.
"""

from __future__ import annotations

from typing import Literal

import pydantic
from typing_extensions import TypedDict

from watcher.core.checked import checked
from watcher.core.contract_doc import ContractDiff, SnapshotSummary

REPORT_VERSION = 2
"""The shape written now; `load_report` reads 1 (no `report_version`: release e8aec50 and before) and 2."""

Verdict = Literal["pass", "fail", "error"]


class ReportError(ValueError):
    """A stored report or a CI artifact that is not a run report of any known version (names the field)."""


_KEEP_UNKNOWN = pydantic.with_config(pydantic.ConfigDict(extra="allow"))
"""A part written by another version may hold fields this one does not know: loading keeps them, never drops."""


class Reason(TypedDict):
    """Why the verdict is what it is: one per thing that went wrong (none on a pass)."""

    verdict: str
    reason: str


@_KEEP_UNKNOWN
class SourcePart(TypedDict, total=False):
    """Where the server's code came from (a git source's checkout); None for a server on a local path."""

    ok: bool
    git: str
    ref: str
    subdir: str
    commit: str | None
    root: str
    project: str
    seconds: float
    error: str | None
    evidence: str


@_KEEP_UNKNOWN
class InstallPart(TypedDict, total=False):
    """The environment built for the SDK version (`suites/build/env.EnvResult`) and whether a pre-build made it."""

    ok: bool
    language: str
    sdk_package: str
    sdk_version: str
    path: str
    cached: bool
    seconds: float
    installer: str
    error: str | None
    evidence: str
    log: str
    bin_dirs: list[str]
    project_dir: str
    digest: str
    rebuilt: str | None
    sandboxed: bool
    watcher_fault: str | None
    fault_rule: str | None
    egress_refused: list[dict[str, object]]
    prebuilt: bool


@_KEEP_UNKNOWN
class StartPart(TypedDict, total=False):
    """How the server under test started (`boundary/process.StartResult`)."""

    ok: bool
    command: list[str]
    transport: str
    url: str | None
    pid: int | None
    seconds: float
    error: str | None
    evidence: str
    stdout: str
    stderr: str
    dropped_env: list[str]


class ServerExit(TypedDict):
    """The server exited while the conformance suite ran: its code and last output."""

    code: int | None
    evidence: str


@_KEEP_UNKNOWN
class ConformanceTool(TypedDict, total=False):
    """The conformance suite a run used and how long getting it took (`error`: why it could not be had), and what
    its install room's egress proxy refused when it was installed (`egress_refused`: kept in the tool's record)."""

    package: str
    version: str
    seconds: float
    error: str
    egress_refused: list[dict[str, object]]


@_KEEP_UNKNOWN
class DeprecationNotice(TypedDict, total=False):
    """A deprecation warning the server printed under the SDK version (`suites/judge/deprecations`)."""

    kind: str
    message: str
    runtime: str
    count: int
    source: str
    where: str
    code: str


@_KEEP_UNKNOWN
class SandboxPart(TypedDict, total=False):
    """The run's boundary, as it was (`boundary/sandbox.Sandbox.to_json`)."""

    mode: str
    reason: str
    network: str
    user: str
    refused: bool


@_KEEP_UNKNOWN
class ProtectionPart(TypedDict, total=False):
    """How the watcher kept its own secrets while the run went on (`core/vault.Protection.to_json`)."""

    non_dumpable: bool
    dumpable_note: str
    secrets_removed_from_environment: list[str]
    environ_block_scrubbed: bool
    notes: list[str]


class Timings(TypedDict):
    """The four parts of one run's time, in seconds (`suites/timings.run_timings`)."""

    detection_seconds: float | None
    queue_seconds: float | None
    build_seconds: float | None
    suite_seconds: float | None
    prebuilt: bool


@_KEEP_UNKNOWN
class ActionsPart(TypedDict, total=False):
    """Where a github-actions run happened (the executor's follow of it)."""

    repo: str
    workflow: str
    ref: str
    run_key: str
    run_id: int | None
    html_url: str | None
    workflow_url: str
    status: str | None
    conclusion: str | None
    resumed: bool


@_KEEP_UNKNOWN
class EvaluationPart(TypedDict, total=False):
    """What the model evaluation made of the run's changes that affect models (`evaluation/trigger`)."""

    status: str
    note: str
    verdict: str
    regressed_tasks: list[str]
    report: str


@_KEEP_UNKNOWN
class ClusterPart(TypedDict, total=False):
    """The failure cluster the result was filed in (`clusters/record`)."""

    signature: str
    rule: str
    summary: str
    parts: list[str]
    servers: int
    teams: int
    threshold_teams: int
    likely_sdk: bool
    first_seen: str
    notes: dict[str, object]


ContractPart = ContractDiff
"""The contract diff as `mcp-watcher diff --format json` writes it, steered by the accept lists (the contract's
own JSON document: watcher/contract/report.py, typed in core/contract_doc), or `{"error": …}` when no diff could
be made. The contract snapshot's summary is `contract_doc.SnapshotSummary`."""


@_KEEP_UNKNOWN
class UnscoredScenario(TypedDict, total=False):
    """A scenario the suite ran that the requirement set does not score, and how it went."""

    scenario: str
    reason: str
    passed: bool
    failing_checks: list[str]


@_KEEP_UNKNOWN
class ConformanceResult(TypedDict, total=False):
    """One requirement set's conformance result, judged from the suite's checks.json files
    (watcher/suites/judge/conformance.py); only `requirements` and `skipped` or `error` when it did not run."""

    requirements: str
    skipped: str
    expected_failures_file: str
    error: str
    evidence: str
    cli_exit_code: int | None
    seconds: float
    room: str
    scenarios: int
    passed: int
    failed: int
    checks: dict[str, int]
    expected_failures: list[str]
    unexpected_failures: list[str]
    stale_entries: list[str]
    failure_messages: dict[str, str]
    missing: list[str]
    unscored: list[UnscoredScenario]
    ok: bool
    baseline_entries: int
    agrees_with_cli: bool


@_KEEP_UNKNOWN
class FixItem(TypedDict):
    """A failing scenario of a readiness set: its failing check ids, the first message and the spec's links."""

    scenario: str
    checks: list[str]
    message: str
    spec: list[str]


@_KEEP_UNKNOWN
class StepResult(TypedDict, total=False):
    """What a step run's step returned (`suites/runner.run_step`): `skipped` when the server is not reachable
    over HTTP; a readiness set's judgement (`readiness/judge`: the set, the suite, then `error` or the scenarios
    and what to fix); or a candidate suite's comparison (`readiness/candidate`: both versions' results)."""

    skipped: str
    set: str
    suite_version: str
    arguments: list[str]
    room: str
    error: str
    evidence: str
    scenarios: int
    passed: int
    to_fix: list[FixItem]
    pinned: list[ConformanceResult]
    candidate: list[ConformanceResult]
    egress_refused: list[dict[str, object]]


@_KEEP_UNKNOWN
class RunReport(TypedDict, total=False):
    """One run's report (see the module's doc). The keys are in the order a local run writes them."""

    report_version: int
    server: str
    team: str
    sdk: str
    sdk_package: str
    sdk_version: str
    baseline_sdk_version: str
    language: str
    transport: str
    executor: str
    source: SourcePart | None
    run_id: str
    run_dir: str | None
    started_at: str
    verdict: str | None
    reasons: list[Reason]
    install: InstallPart | None
    start: StartPart | None
    conformance: list[ConformanceResult]
    contract: ContractPart | None
    deprecation_warnings: list[DeprecationNotice]
    seconds: int | float | None
    sandbox: SandboxPart
    protection: ProtectionPart
    conformance_tool: ConformanceTool
    server_exit: ServerExit
    snapshot: SnapshotSummary | None
    step: StepResult
    traceback: str
    trigger: str
    stored_run_id: int
    timings: Timings
    evaluation: EvaluationPart
    cluster: ClusterPart
    actions: ActionsPart
    remote_run_dir: str | None


_READER: pydantic.TypeAdapter[RunReport] = pydantic.TypeAdapter(RunReport)


def egress_target(refusal: dict[str, object]) -> str:
    """What a refusal asked for, as shown: `host:port`, or what a raw socket was (it names no host)."""
    if refusal.get("kind") == "raw":
        return f"{refusal.get('host', '')} ({refusal.get('address', '')})"
    return f"{refusal.get('host', '')}:{refusal.get('port', '')}"


def egress_refusals(report: RunReport | None) -> list[dict[str, object]]:
    """A run's egress audit, every part of it: what its install rooms' proxy refused (`install.egress_refused`),
    then what the conformance suite's install room's did (a check's `conformance_tool.egress_refused`, a readiness
    run's `step.egress_refused`); each refusal names its server and step. Entries that are not objects are dropped."""
    if not report:
        return []
    install, tool, step = report.get("install"), report.get("conformance_tool"), report.get("step")
    parts = [part.get("egress_refused") if isinstance(part, dict) else None for part in (install, tool, step)]
    return [r for part in parts if isinstance(part, list) for r in part if isinstance(r, dict)]


def load_report(data: object, where: str) -> RunReport:
    """A decoded report of any known version, as the current version's shape; `where` names it in an error.

    The document itself is handed back (its keys in their order, its numbers as written, no field added) once it
    is known to fit: a report read and written again is the same bytes. No `report_version`: version 1."""
    if not isinstance(data, dict):
        raise ReportError(f"{where}: a run report is a JSON object, not {type(data).__name__}")
    version = data.get("report_version", 1)
    if version not in (1, REPORT_VERSION):
        raise ReportError(f"{where}: report_version {version!r} is not one this watcher reads (1 to {REPORT_VERSION})")
    # version 1 is version 2's shape without the field: nothing to convert
    return checked(_READER, data, where, ReportError)
