"""One readiness set against one running server: the suite's CLI, then the things to fix with spec links.

Nothing is an expected failure here (the set is new): every failing scored scenario is a thing to fix, named
with its failing check ids, the first message and the spec links the suite gives (``specReferences``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from watcher.boundary.process import tail
from watcher.core.run_report import FixItem, StepResult
from watcher.notify.blocks import safe_url
from watcher.readiness.plan import cli_arguments
from watcher.suites.judge import conformance
from watcher.suites.judge.conformance import FAILING, Baseline, ConformanceTool, collect_checks, evaluate
from watcher.suites.runner import ServerStep, StepTarget

SPEC_SITE = "modelcontextprotocol.io"
"""Where the specification lives: a spec link the suite gives elsewhere is not shown as a link."""


def spec_link(url: str) -> str | None:
    """``url`` when it is a plain https address on the spec's own site; None for anything else (a suite is
    outside code, and a link it names to another site would be a live link of its choosing)."""
    checked = safe_url(url)
    if checked is None or not checked.startswith("https://"):
        return None
    host = urlsplit(checked).hostname or ""
    return checked if host == SPEC_SITE or host.endswith("." + SPEC_SITE) else None


def to_fix(results: dict[str, list[dict[str, Any]]], failing: list[str]) -> list[FixItem]:
    """The failing scenarios of a set, each with its failing checks and their spec links."""
    items: list[FixItem] = []
    for scenario in sorted(failing):
        checks = results.get(scenario) or []
        bad = [c for c in checks if c.get("status") in FAILING]
        urls = (spec_link(str(ref.get("url") or "")) for c in bad for ref in c.get("specReferences") or [])
        links = sorted({u for u in urls if u})  # only the spec's own pages reach a page or a notice
        message = next((str(c.get("errorMessage") or c.get("description") or "") for c in bad), "")
        items.append(
            {
                "scenario": scenario,
                "checks": sorted({str(c.get("id")) for c in bad}),
                "message": message[:300] or "the suite wrote no results for this scenario",
                "spec": links,
            }
        )
    return items


def judge(results: dict[str, list[dict[str, Any]]], tool: ConformanceTool, set_name: str) -> StepResult:
    verdict = evaluate(results, conformance.load_requirement_set(tool, set_name), Baseline(None))
    fix = to_fix(results, verdict["unexpected_failures"])
    return {"scenarios": verdict["scenarios"], "passed": verdict["passed"], "to_fix": fix}


def readiness_step(tool: ConformanceTool, set_name: str, timeout: float) -> ServerStep:
    """The step `runner.run_step` runs against the started server (the suite in a room of its own)."""

    def step(target: StepTarget) -> StepResult:
        base: StepResult = {"set": set_name, "suite_version": tool.version, "arguments": cli_arguments(set_name)}
        base["egress_refused"] = list(tool.egress_refused)  # the suite's install's, from its record
        out_dir = target.out_dir
        try:
            run, results_dir = conformance.invoke_suite(
                tool,
                server=target.server,
                boundary=target.boundary,
                arguments=cli_arguments(set_name),
                out_dir=out_dir,
                timeout=timeout,
                secret_names=target.secret_names,
                cancel=target.cancel,
            )
        except conformance.ConformanceError as exc:
            return {**base, "error": str(exc)}
        base["room"] = run.where
        if run.timed_out or run.cancelled:
            return {**base, "error": f"the conformance suite {run.describe()}"}
        results = collect_checks(results_dir)
        if not results:
            evidence = tail(out_dir / "stderr.log") or tail(out_dir / "stdout.log")
            return {**base, "error": f"the conformance suite wrote no results ({run.describe()})", "evidence": evidence}
        try:
            return {**base, **judge(results, tool, set_name)}
        except conformance.ConformanceError as exc:
            return {**base, "error": str(exc)}

    return step
