"""A run's report as a Slack reply (Block Kit + plain-text fallback) in the thread of the beta's alert.

Almost everything in a report came from outside (versions, CI reasons, server errors, log tails, tool
names): every such string is escaped (`blocks.escape`) where it is put into text, and a link is made only
of an address that `blocks.safe_url` accepts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from watcher.config import LoadedConfig
from watcher.core.store_schema import Notice
from watcher.decisions.buttons import result_buttons, with_actions
from watcher.notify import keys
from watcher.notify.blocks import VERDICT_ICONS, context, escape, safe_url, section

MAX_LISTED = 10
WORDS = {"pass": "passes", "fail": "fails", "error": "could not be checked"}


def _bullets(items: list[str], limit: int = MAX_LISTED) -> str:
    lines = [f"• {item}" for item in items[:limit]]  # items are escaped by their makers
    if len(items) > limit:
        lines.append(f"• … and {len(items) - limit} more")
    return "\n".join(lines)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def headline(report: dict[str, Any]) -> str:
    """One line naming the server, the SDK version and the verdict, escaped for mrkdwn."""
    verdict = report.get("verdict") or "error"
    return escape(
        f"{report['server']} {WORDS.get(verdict, verdict)} on {report.get('sdk_package') or report.get('sdk')} "
        f"{report['sdk_version']} (baseline {report.get('baseline_sdk_version')})"
    )


def conformance_lines(entry: dict[str, Any]) -> tuple[str, list[str], list[str]]:
    """One requirement set: its summary line, then its regressions and stale entries."""
    revision = escape(str(entry.get("requirements")))
    if entry.get("skipped"):
        return f"{revision}: skipped ({escape(str(entry['skipped']))})", [], []
    if entry.get("error"):
        return f"{revision}: not judged: {escape(str(entry['error']))}", [], []
    unscored = entry.get("unscored") or []
    unscored_failing = sum(1 for u in unscored if not u.get("passed"))
    line = f"{revision}: {_scenario_counts(entry)}"
    stale_count = len(entry["stale_entries"])
    if stale_count:
        line += f"; {stale_count} stale entr{'y' if stale_count == 1 else 'ies'}"
    if unscored:
        line += f"; not scored: {len(unscored)} run, {unscored_failing} failing"
    messages = entry.get("failure_messages") or {}
    regressions = [
        f"`{escape(str(i))}`" + (f": {escape(str(messages[i]))}" if messages.get(i) else "")
        for i in entry["unexpected_failures"]
    ]
    stale = [
        f"`{escape(str(i))}` now passes: remove it from the expected-failures file" for i in entry["stale_entries"]
    ]
    return line, regressions, stale


def _scenario_counts(entry: dict[str, Any]) -> str:
    """Scenarios passed and failed, the failed ones split by whether anything unexpected failed in them:
    every number is of scenarios, except the known and unexpected failures, which may be single checks."""
    passed, failed = int(entry["passed"]), int(entry["failed"])
    total = int(entry.get("scenarios") or passed + failed)
    if not failed:
        return f"all {total} scenarios passed" if passed == total else f"{passed} of {total} scenarios passed"
    known, unexpected = len(entry["expected_failures"]), entry["unexpected_failures"]
    surprised = min(failed, len({str(ident).partition(":")[0] for ident in unexpected}))
    counts = f"{passed} of {total} scenarios passed; "
    if not surprised:
        return counts + f"the {failed} that failed did so only as expected ({known} known failure{_s(known)})"
    return counts + (
        f"{failed} failed: {failed - surprised} only as expected ({known} known failure{_s(known)}), "
        f"{surprised} with an unexpected failure ({len(unexpected)} unexpected)"
    )


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _change_line(change: dict[str, Any]) -> str:
    where = f"{escape(str(change.get('list', '?')))} `{escape(str(change.get('name', '?')))}`"
    detail = escape(str(change.get("kind", "changed")))
    if change.get("path"):
        detail += f" at `{escape(str(change['path']))}`"
    if change.get("era"):
        detail += f" ({escape(str(change['era']))})"
    return f"{where}: {detail}"


def _accepted_line(change: dict[str, Any]) -> str:
    why = change.get("accepted") or {}
    return f"{_change_line(change)} — until {escape(str(why.get('expires')))}: {escape(str(why.get('reason')))}"


def contract_groups(contract: dict[str, Any] | None) -> tuple[list[str], list[str], int]:
    """(breaking lines, affects-models lines, count of other changes)."""
    if not contract or contract.get("error"):
        return [], [], 0
    changes = contract.get("changes") or []
    breaking = [_change_line(c) for c in changes if c.get("breaksClients")]
    models = [_change_line(c) for c in changes if not c.get("breaksClients") and c.get("affectsModels")]
    return breaking, models, len(changes) - len(breaking) - len(models)


def _warning_line(warning: dict[str, Any]) -> str:
    count = f" (×{warning['count']})" if warning.get("count", 1) > 1 else ""
    return f"{escape(str(warning['kind']))}: {escape(str(warning['message']))}{count}"


def _evidence(report: dict[str, Any]) -> str | None:
    for step in ("install", "start"):
        data = report.get(step) or {}
        if data and not data.get("ok") and (data.get("evidence") or data.get("error")):
            return escape(f"{step}: {data.get('error')}\n{data.get('evidence') or ''}".strip())
    return None


def _provenance(report: dict[str, Any]) -> str:
    """Where the code came from (a git commit) and where the run happened (an Actions run link)."""
    parts = []
    source = report.get("source") or {}
    if source.get("commit"):
        parts.append(
            f"commit {source['commit'][:12]} of {escape(str(source.get('git')))} ({escape(str(source.get('ref')))})"
        )
    actions = report.get("actions") or {}
    link = safe_url(str(actions.get("html_url") or ""))
    if link:
        parts.append(f"<{link}|GitHub Actions run>")
    return "".join(f" · {p}" for p in parts)


def render(report: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """(plain text, Block Kit blocks) for one run's report."""
    verdict = report.get("verdict") or "error"
    title = headline(report)
    text_lines = [f"{verdict.upper()}: {title}"]
    blocks = [section(f"{VERDICT_ICONS.get(verdict, '')} *{title}*")]
    reasons = [escape(str(r["reason"])) for r in report.get("reasons") or [] if r.get("verdict") != "pass"]
    if reasons:
        blocks.append(section(_bullets(reasons)))
        text_lines += [f"- {r}" for r in reasons]

    evidence = _evidence(report)
    if evidence:
        blocks.append(section(f"```{evidence[-2500:]}```"))
        text_lines.append(evidence[-1500:])

    sets = report.get("conformance") or []
    if sets:
        parts = []
        for entry in sets:
            line, regressions, stale = conformance_lines(entry)
            part = f"*{line}*"
            text_lines.append(f"Conformance {line}")
            if regressions:
                part += "\nRegressions:\n" + _bullets(regressions)
                text_lines += [f"  regression {r}" for r in regressions[:MAX_LISTED]]
            if stale:
                part += "\nStale entries:\n" + _bullets(stale)
                text_lines += [f"  stale {s}" for s in stale[:MAX_LISTED]]
            parts.append(part)
        blocks.append(section("*Conformance*\n" + "\n".join(parts)))

    contract = report.get("contract")
    if contract is not None:
        if contract.get("error"):
            body = f"*Contract*: {escape(str(contract['error']))}"
            text_lines.append(f"Contract: {escape(str(contract['error']))}")
        else:
            breaking, models, others = contract_groups(contract)
            against = escape(str(contract.get("baseline") or report.get("baseline_sdk_version")))
            body = f"*Contract* against {against}: "
            if not (breaking or models or others):
                body += "no changes"
            else:
                body += f"{len(breaking)} breaking, {len(models)} affect models, {others} other"
            if breaking:
                body += "\n_Breaks clients_\n" + _bullets(breaking)
            if models:
                body += "\n_Affects models_\n" + _bullets(models)
            text_lines.append(f"Contract: {len(breaking)} breaking, {len(models)} affect models, {others} other")
            text_lines += [f"  breaking {b}" for b in breaking[:MAX_LISTED]]
            text_lines += [f"  affects models {m}" for m in models[:MAX_LISTED]]
            accepted = [_accepted_line(c) for c in contract.get("accepted") or []]
            if accepted:
                body += f"\n_Accepted ({len(accepted)}, not failing the run)_\n" + _bullets(accepted)
                text_lines.append(f"Contract: {len(accepted)} accepted")
                text_lines += [f"  accepted {a}" for a in accepted[:MAX_LISTED]]
        blocks.append(section(body))

    evaluation = report.get("evaluation") or {}
    if evaluation.get("note"):
        note = escape(str(evaluation["note"]))
        blocks.append(context(f"Models: {note}"))
        text_lines.append(f"Models: {note}")

    warnings = [_warning_line(w) for w in report.get("deprecation_warnings") or []]
    if warnings:
        blocks.append(section("*Deprecation warnings*\n" + _bullets(warnings)))
        text_lines += [f"Deprecation: {w}" for w in warnings[:MAX_LISTED]]

    run_id = escape(str(report.get("run_id", "?")))
    footer = f"Took {_duration(report.get('seconds'))} · run {run_id}" + _provenance(report)
    blocks.append(context(footer))
    text_lines.append(footer)
    return "\n".join(text_lines), blocks


def result_notice(loaded: LoadedConfig, report: dict[str, Any], stored_id: int | None = None) -> Notice:
    """The result as a reply in the thread of the beta's alert for the server's team; ``stored_id`` (the run's
    row, its page /runs/<id>) gives it the Accept… and Open run buttons when Slack can answer them."""
    text, blocks = render(report)
    blocks = with_actions(blocks, result_buttons(loaded.config, report, stored_id))
    return beta_thread_reply(
        loaded, report["server"], report["sdk_version"], keys.suite_result, "suite_result", text, blocks
    )


def beta_thread_reply(
    loaded: LoadedConfig,
    server_name: str,
    version: str,
    key_of: Callable[[str, str, str], str],
    kind: str,
    text: str,
    blocks: list[dict[str, Any]],
    *,
    threaded: bool = True,
) -> Notice:
    """A notice about one server on one SDK version to its team, in the thread of that version's alert."""
    config = loaded.config
    server = config.server(server_name)
    team = config.team(server.team)
    return Notice(
        key=key_of(server.name, version, team.name),
        team=team.name,
        channel=team.slack_channel,
        kind=kind,
        text=text,
        blocks=blocks,
        thread_of=keys.release_alert(server.sdk, version, team.name) if threaded else None,
    )
