"""The readiness state, typed: what a pass keeps in the state (`KV_RESULTS`, `KV_INSPECTED`, `KV_CANDIDATES`,
JSON in the kv table) and what it answers. A step's own result (`StepResult`, `FixItem`) is part of the run
report (watcher/core/run_report). The stored results are read through `stored_results`, which checks them
against these types (a state written by an older release loads the same: the shape has not changed)."""

from __future__ import annotations

import pydantic
from typing_extensions import TypedDict

from watcher.core.checked import checked
from watcher.core.run_report import FixItem, ReportError
from watcher.core.store import Store

_KEEP_UNKNOWN = pydantic.with_config(pydantic.ConfigDict(extra="allow"))

KV_RESULTS = "readiness:results"
"""Set → {revision, release, servers: {server: entry}} (written by watcher.readiness.cycle)."""


@_KEEP_UNKNOWN
class ReadinessEntry(TypedDict, total=False):
    """One server's readiness for one set (`cycle.readiness_entry`): its status (ready · to_fix · not_testable),
    what to fix, the versions it was judged on, and why it could not be tested."""

    sdk: str
    sdk_version: str | None
    suite_version: str
    checked: str
    to_fix: list[FixItem]
    status: str
    reason: str
    run_dir: str | None
    scenarios: int | None
    passed: int | None


@_KEEP_UNKNOWN
class SetResults(TypedDict, total=False):
    """One requirement set's stored results: the revision it is for, its projected release, per server."""

    revision: str
    release: str
    servers: dict[str, ReadinessEntry]


Results = dict[str, SetResults]
"""`KV_RESULTS`: requirement set → its results."""


@_KEEP_UNKNOWN
class InspectedVersion(TypedDict, total=False):
    """`suite.KV_INSPECTED`'s value for one suite version: its sets' scored scenarios, or why it could not be read."""

    sets: dict[str, list[str]]
    error: str


@_KEEP_UNKNOWN
class CandidateOutcome(TypedDict, total=False):
    """What a candidate suite made of one server (the differences from the pinned one), or why it did not run."""

    server: str
    differences: list[str]
    error: str


class RunLine(TypedDict):
    """One server run of a pass, for the log and the CLI."""

    server: str
    set: str
    status: str


class PassSummary(TypedDict, total=False):
    """What one readiness pass did (`cycle.check_readiness`), for the log and the CLI."""

    ok: bool
    suite_version: str | None
    sets: dict[str, str]
    runs: list[RunLine]
    candidate: list[CandidateOutcome]
    error: str
    stopped: bool
    egress_refused: list[dict[str, object]]


_RESULTS: pydantic.TypeAdapter[Results] = pydantic.TypeAdapter(Results)


def stored_results(store: Store) -> Results:
    """The stored results, checked against their types (a field of another type is a ReportError naming it)."""
    return checked(_RESULTS, store.get_kv(KV_RESULTS) or {}, f"state {KV_RESULTS}", ReportError)
