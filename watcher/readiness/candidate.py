"""A newer suite version tried as a candidate beside the pinned one, for the sets servers already run.

Each server (HTTP, with sets) runs once per candidate version on its baseline SDK version: every configured set
on the pinned suite and on the candidate, with the server's expected-failures file. A set judged differently
(passes on one, or fails other scenarios) is reported once to the operators with both results.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from typing_extensions import TypedDict

from watcher.config import LoadedConfig
from watcher.core.errors import ConformanceError, ToolMissing
from watcher.core.run_report import ConformanceResult, RunReport, StepResult
from watcher.core.store import Store
from watcher.readiness.model import CandidateOutcome
from watcher.readiness.notices import candidate_notice
from watcher.readiness.suite import install
from watcher.suites.judge import conformance
from watcher.suites.runner import ServerStep, StepTarget
from watcher.suites.settings import Server

KV_CANDIDATES = "readiness:candidates"
"""f"{server}@{candidate}" → the comparison, once per server and candidate version."""


class CandidateComparison(TypedDict):
    """`KV_CANDIDATES`'s value: how the candidate suite judged the server apart from the pinned one."""

    differences: list[str]


def differences(
    pinned: list[ConformanceResult], candidate: list[ConformanceResult], names: tuple[str, str]
) -> list[str]:
    """Per set, a line when the two suite versions disagree (the verdict or the failing scenarios)."""
    lines = []
    by_set = {r["requirements"]: r for r in pinned}
    for other in candidate:
        one = by_set.get(other["requirements"])
        if one is None:
            continue
        if one.get("error") or other.get("error"):
            if bool(one.get("error")) != bool(other.get("error")):
                lines.append(
                    f"{other['requirements']}: {names[0]}: {one.get('error') or 'judged'}; "
                    f"{names[1]}: {other.get('error') or 'judged'}"
                )
            continue
        a, b = set(one["unexpected_failures"]), set(other["unexpected_failures"])
        if one["ok"] != other["ok"] or a != b:
            newly, fixed = sorted(b - a), sorted(a - b)
            parts = [
                f"{names[0]} {'passes' if one['ok'] else 'fails'}, {names[1]} {'passes' if other['ok'] else 'fails'}"
            ]
            if newly:
                parts.append(f"{names[1]} fails {', '.join(newly)} which {names[0]} passed")
            if fixed:
                parts.append(f"{names[1]} passes {', '.join(fixed)} which {names[0]} failed")
            lines.append(f"{other['requirements']}: " + "; ".join(parts))
    return lines


def comparison_step(
    loaded: LoadedConfig, server: Server, tools: tuple[conformance.ConformanceTool, conformance.ConformanceTool]
) -> ServerStep:
    configured = loaded.resolve(server.expected_failures) if server.expected_failures else None

    def results(label: str, tool: conformance.ConformanceTool, target: StepTarget) -> list[ConformanceResult]:
        return [
            conformance.run_requirement_set(
                tool,
                server=target.server,
                boundary=target.boundary,
                revision=revision,
                baseline_path=conformance.expected_failures_path(configured, revision),
                out_dir=target.out_dir / label / revision,
                timeout=server.timeouts.suite,
                secret_names=target.secret_names,
                cancel=target.cancel,
            )
            for revision in server.requirements
        ]

    def step(target: StepTarget) -> StepResult:
        pinned = results("pinned", tools[0], target)  # the pinned suite first, then the candidate
        return {"pinned": pinned, "candidate": results("candidate", tools[1], target)}

    return step


def try_candidate(
    loaded: LoadedConfig,
    store: Store,
    pinned: str,
    candidate: str,
    runner: Callable[[LoadedConfig, str, str, ServerStep, threading.Event | None], RunReport],
    stop: threading.Event | None = None,
) -> list[CandidateOutcome]:
    done: dict[str, CandidateComparison] = store.get_kv(KV_CANDIDATES) or {}
    out: list[CandidateOutcome] = []
    servers = [s for s in loaded.config.servers if s.requirements and s.transport == "http" and s.path]
    if not servers:
        return out
    try:
        tools = (install(loaded, pinned, cancel=stop), install(loaded, candidate, cancel=stop))
    except (ConformanceError, ToolMissing) as exc:
        return [{"error": f"candidate suite {candidate}: {exc}"}]
    for server in servers:
        key = f"{server.name}@{candidate}"
        if key in done:
            continue
        if stop is not None and stop.is_set():
            break
        report = runner(loaded, server.name, server.baseline_sdk_version, comparison_step(loaded, server, tools), stop)
        step = report.get("step") or {}
        if "pinned" not in step:
            continue  # the server did not run: no comparison to make (tried again next pass)
        lines = differences(step["pinned"], step["candidate"], (pinned, candidate))
        done[key] = {"differences": lines}
        store.set_kv(KV_CANDIDATES, done)
        if lines:
            candidate_notice(store, loaded.config, server.name, pinned, candidate, lines)
        out.append({"server": server.name, "differences": lines})
    return out
