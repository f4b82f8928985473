"""The paired comparison: per-task summaries of both versions, the thresholds' verdict, paired tests.

Only complete pairs (the same task and trial number measured on both versions) enter a summary or a
test, so a run cut short compares like with like. A regression is named by its task ids.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from watcher.evaluation.harness import PairedRun, TrialResult
from watcher.evaluation.report import Comparison, PairedDelta, SideSummary, TaskEntry, Totals
from watcher.evaluation.settings import EvaluationThresholds
from watcher.evaluation.stats import mcnemar_exact, paired_counts
from watcher.evaluation.tasks import Task

REGRESSION, NO_REGRESSION, ERROR = "regression", "no_regression", "error"
COUNTS = ("tool_calls", "input_tokens", "output_tokens", "tool_errors")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def side_summary(trials: Sequence[TrialResult]) -> SideSummary:
    n = len(trials)
    successes = sum(1 for t in trials if t.outcome == "success")
    return {
        "trials": n,
        "successes": successes,
        "success_rate": round(successes / n, 4) if n else None,
        "tool_calls": round(_mean([t.tool_calls for t in trials]), 4),
        "tools": dict(Counter(name for t in trials for name in t.tools)),
        "input_tokens": sum(t.input_tokens for t in trials),
        "output_tokens": sum(t.output_tokens for t in trials),
        "tokens_per_trial": round(_mean([t.input_tokens + t.output_tokens for t in trials]), 2),
        "tool_errors": sum(t.tool_errors for t in trials),
        "tool_errors_per_trial": round(_mean([t.tool_errors for t in trials]), 4),
        "steps": round(_mean([t.steps for t in trials]), 2),
        "seconds": round(_mean([t.seconds for t in trials]), 4),
    }


def complete_pairs(trials: Sequence[TrialResult]) -> list[tuple[TrialResult, TrialResult]]:
    """(baseline, candidate) for every task and trial number measured on both versions, in run order."""
    by_key: dict[tuple[str, int], dict[str, TrialResult]] = {}
    for t in trials:
        if t.measured:
            by_key.setdefault((t.task, t.index), {})[t.side] = t
    return [(s["baseline"], s["candidate"]) for s in by_key.values() if len(s) == 2]


def _ratio_why(label: str, old: float, new: float, ratio: float | None) -> str | None:
    if ratio is None or new <= old:
        return None
    if old > 0 and new >= old * ratio:
        return f"{label} per trial {old:g} → {new:g} (×{new / old:.2f}, threshold ×{ratio:g})"
    if old == 0 and new >= 1:
        return f"{label} per trial 0 → {new:g}"
    return None


def task_regressions(
    task: Task, old: SideSummary, new: SideSummary, failures: list[str], limits: EvaluationThresholds
) -> list[str]:
    why: list[str] = []
    drop = (old["success_rate"] or 0) - (new["success_rate"] or 0)
    if drop >= limits.success_drop - 1e-9:
        line = (
            f"success {old['successes']}/{old['trials']} → {new['successes']}/{new['trials']} "
            f"(drop {drop:.0%}, threshold {limits.success_drop:.0%})"
        )
        if failures:
            line += ": " + "; ".join(sorted(set(failures))[:3])
        why.append(line)
    if task.expect.no_tool and limits.no_tool_calls and new["tool_calls"] > old["tool_calls"]:
        why.append(f"calls a tool where none is needed: {', '.join(sorted(new['tools']))}")
    elif not task.expect.no_tool:
        calls = _ratio_why("tool calls", old["tool_calls"], new["tool_calls"], limits.tool_calls_ratio)
        if calls:
            why.append(calls)
    tokens = _ratio_why("tokens", old["tokens_per_trial"], new["tokens_per_trial"], limits.tokens_ratio)
    if tokens:
        why.append(tokens)
    increase = new["tool_errors_per_trial"] - old["tool_errors_per_trial"]
    if limits.tool_errors_increase is not None and increase >= limits.tool_errors_increase - 1e-9:
        why.append(f"tool errors per trial {old['tool_errors_per_trial']:g} → {new['tool_errors_per_trial']:g}")
    return why


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


def _delta(pairs: list[tuple[TrialResult, TrialResult]], name: str) -> PairedDelta:
    """One of COUNTS over the pairs: candidate − baseline."""
    counts = paired_counts([(float(getattr(a, name)), float(getattr(b, name))) for a, b in pairs])
    total: int = sum(getattr(b, name) - getattr(a, name) for a, b in pairs)
    return {
        "mean_delta": _finite(counts.mean_delta),
        "total_delta": total,
        "ci95": [_finite(counts.ci_low), _finite(counts.ci_high)],
        "interval": "percentile bootstrap of the mean paired delta",
        "sign_test_p": round(counts.sign_p, 6),
        "increased": counts.increased,
        "decreased": counts.decreased,
    }


def totals(pairs: list[tuple[TrialResult, TrialResult]]) -> Totals:
    test = mcnemar_exact([(a.outcome == "success", b.outcome == "success") for a, b in pairs])
    return {
        "pairs": len(pairs),
        "baseline": side_summary([a for a, _ in pairs]),
        "candidate": side_summary([b for _, b in pairs]),
        "success": {
            "test": "exact McNemar on paired trials",
            "baseline_only": test.baseline_only,
            "candidate_only": test.candidate_only,
            "p_two_sided": round(test.p_two_sided, 6),
            "p_worse": round(test.p_worse, 6),
        },
        "tool_calls": _delta(pairs, "tool_calls"),
        "input_tokens": _delta(pairs, "input_tokens"),
        "output_tokens": _delta(pairs, "output_tokens"),
        "tool_errors": _delta(pairs, "tool_errors"),
    }


def compare(tasks: Sequence[Task], run: PairedRun, limits: EvaluationThresholds) -> Comparison:
    """The `tasks`, `totals`, `regressions` and `verdict` parts of the report."""
    pairs = complete_pairs(run.trials)
    entries: list[TaskEntry] = []
    regressions: list[str] = []
    for task in tasks:
        mine = [(a, b) for a, b in pairs if a.task == task.id]
        old = side_summary([a for a, _ in mine])
        new = side_summary([b for _, b in mine])
        why = (
            task_regressions(task, old, new, [b.why for _, b in mine if b.outcome == "failure"], limits)
            if mine
            else ["not measured"]
        )
        regressed = bool(mine) and bool(why)
        entries.append(
            {
                "id": task.id,
                "expect": task.expect.describe(),
                "pairs": len(mine),
                "baseline": old,
                "candidate": new,
                "regressed": regressed,
                "why": why,
            }
        )
        if regressed:
            regressions += [f"{task.id}: {w}" for w in why]
    total = totals(pairs)
    success = total["success"]
    if pairs and success["baseline_only"] > success["candidate_only"] and success["p_worse"] < limits.alpha:
        regressions.append(
            f"overall: {success['baseline_only']} pair(s) lost, {success['candidate_only']} gained "
            f"(exact McNemar, one-sided p = {success['p_worse']:.4g} < {limits.alpha:g})"
        )
    if not pairs:
        verdict = ERROR
    elif regressions:
        verdict = REGRESSION
    elif run.stopped:
        verdict = ERROR  # nothing found in what was measured, but the rest was not: no all-clear
    else:
        verdict = NO_REGRESSION
    return {
        "verdict": verdict,
        "regressed_tasks": [e["id"] for e in entries if e["regressed"]],
        "regressions": regressions,
        "tasks": entries,
        "totals": total,
    }
