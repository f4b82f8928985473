"""An evaluation report as text (the CLI's table) and as one threaded Slack reply under the beta's alert."""

from __future__ import annotations

from typing import Any

from watcher.config import LoadedConfig
from watcher.core.store_schema import Notice
from watcher.evaluation.report import EvaluationReport, Totals
from watcher.notify import blocks as kit
from watcher.notify import keys
from watcher.suites.notices import beta_thread_reply

MAX_LISTED = 12
ICONS = {
    "regression": kit.VERDICT_ICONS["fail"],
    "no_regression": kit.VERDICT_ICONS["pass"],
    "error": kit.VERDICT_ICONS["error"],
}


def _clip(text: kit.Mrkdwn) -> kit.Mrkdwn:
    return kit.clip(text, kit.MAX_SECTION_CHARS)


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def headline(report: EvaluationReport) -> str:
    verdict = report.get("verdict") or "error"
    who = f"{report.get('provider')} {report.get('model')}, {report.get('trials')} trial(s) per task"
    versions = f"{report['candidate_version']} against {report['baseline_version']}"
    if verdict == "regression":
        names = ", ".join(report.get("regressed_tasks") or []) or "overall"
        return f"{report['server']}: models do worse on {versions} ({who}): {names}"
    if verdict == "no_regression":
        return f"{report['server']}: no model-behaviour regression on {versions} ({who})"
    return f"{report['server']}: model evaluation of {versions} incomplete ({who})"


def task_lines(report: EvaluationReport) -> list[str]:
    """One line per task: success, tool calls, tokens and tool errors, baseline → candidate."""
    lines = []
    for task in report.get("tasks") or []:
        old, new = task["baseline"], task["candidate"]
        mark = "REGRESSED" if task["regressed"] else ("not measured" if not task["pairs"] else "ok")
        lines.append(
            f"{task['id']:<20} {_rate(old['success_rate']):>4} → {_rate(new['success_rate']):<4}  "
            f"calls {old['tool_calls']:g} → {new['tool_calls']:g}  "
            f"tokens {old['input_tokens'] + old['output_tokens']} → {new['input_tokens'] + new['output_tokens']}  "
            f"errors {old['tool_errors']} → {new['tool_errors']}  {mark}"
        )
    return lines


def totals_line(report: EvaluationReport) -> str | None:
    totals: Totals = report.get("totals") or {}
    if not totals.get("pairs"):
        return None
    success = totals["success"]
    parts = [
        f"{totals['pairs']} paired trials",
        f"success lost in {success['baseline_only']}, gained in {success['candidate_only']} "
        f"(exact McNemar p = {success['p_two_sided']:.3g})",
    ]
    for entry, label in (
        (totals["tool_calls"], "tool calls"),
        (totals["input_tokens"], "input tokens"),
        (totals["output_tokens"], "output tokens"),
    ):
        low, high = entry["ci95"]
        parts.append(f"{label} {entry['mean_delta']:+g}/trial [95% {low:+g}, {high:+g}]")
    return "; ".join(parts)


def not_measured_lines(report: EvaluationReport) -> list[str]:
    lines = []
    for entry in report.get("not_measured") or []:
        if entry.get("task") == "*":
            lines.append(f"nothing measured: {entry['reason']}")
        else:
            trials = entry["trials"]
            span = f"trial {trials[0]}" if len(trials) == 1 else f"trials {trials[0]}–{trials[-1]}"
            lines.append(f"{entry['task']}: {span} of {entry['of']} not measured ({entry['reason']})")
    return lines


def render(report: EvaluationReport) -> tuple[kit.Mrkdwn, list[dict[str, Any]]]:
    """(plain text, Block Kit blocks)."""
    verdict = report.get("verdict") or "error"
    title = headline(report)
    text = [f"{verdict.upper()}: {title}"]
    icon = ICONS.get(verdict, kit.Mrkdwn(""))
    blocks: list[dict[str, Any]] = [kit.section(kit.Mrkdwn("{} *{}*").format(icon, title))]
    problems = list(report.get("regressions") or [])
    if report.get("error"):
        problems.insert(0, str(report["error"]))
    problems += not_measured_lines(report) if report.get("partial") else []
    if problems:
        listed = problems[:MAX_LISTED] + (
            [f"… and {len(problems) - MAX_LISTED} more"] if len(problems) > MAX_LISTED else []
        )
        blocks.append(kit.section(_clip(kit.Mrkdwn("\n").join(kit.Mrkdwn("• {}").format(p) for p in listed))))
        text += [f"- {p}" for p in listed]
    rows = task_lines(report)
    if rows:
        table = (
            "task                 success      tool calls, tokens, tool errors (baseline → candidate)\n"
            + "\n".join(rows)
        )
        blocks.append(kit.section(_clip(kit.Mrkdwn("```{}```").format(table))))
        text.append(table)
    summary = totals_line(report)
    if summary:
        blocks.append(kit.context(kit.escape(summary)))
        text.append(summary)
    footer = "A few trials per task are a smoke test, not a benchmark: see docs/evaluation.md."
    blocks.append(kit.context(kit.escape(footer)))
    text.append(footer)
    return kit.escape("\n".join(text)), blocks


def evaluation_notice(loaded: LoadedConfig, report: EvaluationReport, threaded: bool = True) -> Notice:
    """The result as a reply in the thread of the beta's alert for the server's team."""
    text, blocks = render(report)
    return beta_thread_reply(
        loaded,
        report["server"],
        report["candidate_version"],
        keys.evaluation_result,
        "evaluation_result",
        text,
        blocks,
        threaded=threaded,
    )
