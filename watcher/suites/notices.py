"""A run's report as a Slack reply (Block Kit + plain-text fallback) in the thread of the beta's alert.

Almost everything in a report came from outside (versions, CI reasons, server errors, log tails, tool
names): every such string is escaped (`blocks.escape`) where it is put into text, and a link is made only
of an address that `blocks.safe_url` accepts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from watcher.clusters.notices import result_line
from watcher.config import LoadedConfig
from watcher.core.contract_doc import ContractChange, ContractDiff
from watcher.core.run_report import ConformanceResult, DeprecationNotice, InstallPart, RunReport, StartPart
from watcher.core.store_schema import Notice
from watcher.decisions.buttons import result_buttons, with_actions
from watcher.notify import keys
from watcher.notify.blocks import VERDICT_ICONS, Mrkdwn, context, escape, link, safe_url, section

MAX_LISTED = 10
WORDS = {"pass": "passes", "fail": "fails", "error": "could not be checked"}


def _bullets(items: list[Mrkdwn], limit: int = MAX_LISTED) -> Mrkdwn:
    lines = [Mrkdwn("• {}").format(item) for item in items[:limit]]
    if len(items) > limit:
        lines.append(Mrkdwn("• … and {} more").format(len(items) - limit))
    return Mrkdwn("\n").join(lines)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def headline(report: RunReport) -> Mrkdwn:
    """One line naming the server, the SDK version and the verdict, escaped for mrkdwn."""
    verdict = report.get("verdict") or "error"
    return escape(
        f"{report['server']} {WORDS.get(verdict, verdict)} on {report.get('sdk_package') or report.get('sdk')} "
        f"{report['sdk_version']} (baseline {report.get('baseline_sdk_version')})"
    )


def conformance_lines(entry: ConformanceResult) -> tuple[Mrkdwn, list[Mrkdwn], list[Mrkdwn]]:
    """One requirement set: its summary line, then its regressions and stale entries."""
    revision = entry.get("requirements")
    if entry.get("skipped"):
        return Mrkdwn("{}: skipped ({})").format(revision, entry["skipped"]), [], []
    if entry.get("error"):
        return Mrkdwn("{}: not judged: {}").format(revision, entry["error"]), [], []
    unscored = entry.get("unscored") or []
    unscored_failing = sum(1 for u in unscored if not u.get("passed"))
    stale_count = len(entry["stale_entries"])
    stale_said = f"; {stale_count} stale entr{'y' if stale_count == 1 else 'ies'}" if stale_count else ""
    line = escape(f"{revision}: {_scenario_counts(entry)}{stale_said}")
    if unscored:
        line += Mrkdwn("; not scored: {} run, {} failing").format(len(unscored), unscored_failing)
    messages = entry.get("failure_messages") or {}
    regressions = [
        Mrkdwn("`{}`").format(i) + (Mrkdwn(": {}").format(messages[i]) if messages.get(i) else "")
        for i in entry["unexpected_failures"]
    ]
    stale = [
        Mrkdwn("`{}` now passes: remove it from the expected-failures file").format(i) for i in entry["stale_entries"]
    ]
    return line, regressions, stale


def _scenario_counts(entry: ConformanceResult) -> str:
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


def _change_line(change: ContractChange) -> Mrkdwn:
    line = Mrkdwn("{} `{}`: {}").format(change.get("list", "?"), change.get("name", "?"), change.get("kind", "changed"))
    if change.get("path"):
        line += Mrkdwn(" at `{}`").format(change["path"])
    if change.get("era"):
        line += Mrkdwn(" ({})").format(change["era"])
    return line


def _accepted_line(change: ContractChange) -> Mrkdwn:
    why = change.get("accepted") or {}
    return Mrkdwn("{} — until {}: {}").format(_change_line(change), why.get("expires"), why.get("reason"))


def contract_groups(contract: ContractDiff | None) -> tuple[list[Mrkdwn], list[Mrkdwn], int]:
    """(breaking lines, affects-models lines, count of other changes)."""
    if not contract or contract.get("error"):
        return [], [], 0
    changes = contract.get("changes") or []
    breaking = [_change_line(c) for c in changes if c.get("breaksClients")]
    models = [_change_line(c) for c in changes if not c.get("breaksClients") and c.get("affectsModels")]
    return breaking, models, len(changes) - len(breaking) - len(models)


def _warning_line(warning: DeprecationNotice) -> Mrkdwn:
    count = f" (×{warning['count']})" if warning.get("count", 1) > 1 else ""
    return Mrkdwn("{}: {}{}").format(warning["kind"], warning["message"], count)


def _evidence(report: RunReport) -> Mrkdwn | None:
    steps: tuple[tuple[str, InstallPart | StartPart | None], ...] = (
        ("install", report.get("install")),
        ("start", report.get("start")),
    )
    for step, part in steps:
        data = part or {}
        if data and not data.get("ok") and (data.get("evidence") or data.get("error")):
            return escape(f"{step}: {data.get('error')}\n{data.get('evidence') or ''}".strip())
    return None


def _provenance(report: RunReport) -> Mrkdwn:
    """Where the code came from (a git commit) and where the run happened (an Actions run link)."""
    parts = []
    source = report.get("source") or {}
    if source.get("commit"):
        parts.append(
            Mrkdwn("commit {} of {} ({})").format(str(source["commit"])[:12], source.get("git"), source.get("ref"))
        )
    actions = report.get("actions") or {}
    link_to = safe_url(str(actions.get("html_url") or ""))
    if link_to:
        parts.append(link(link_to, "GitHub Actions run"))
    return Mrkdwn("").join(Mrkdwn(" · {}").format(p) for p in parts)


def render(report: RunReport) -> tuple[Mrkdwn, list[dict[str, Any]]]:
    """(plain text, Block Kit blocks) for one run's report."""
    verdict = report.get("verdict") or "error"
    title = headline(report)
    text_lines = [Mrkdwn("{}: {}").format(verdict.upper(), title)]
    blocks = [section(Mrkdwn("{} *{}*").format(VERDICT_ICONS.get(verdict, Mrkdwn("")), title))]
    reasons = [escape(r["reason"]) for r in report.get("reasons") or [] if r.get("verdict") != "pass"]
    if reasons:
        blocks.append(section(_bullets(reasons)))
        text_lines += [Mrkdwn("- {}").format(r) for r in reasons]

    evidence = _evidence(report)
    if evidence:
        blocks.append(section(Mrkdwn("```{}```").format(evidence[-2500:])))
        text_lines.append(evidence[-1500:])

    sets = report.get("conformance") or []
    if sets:
        parts = []
        for entry in sets:
            line, regressions, stale = conformance_lines(entry)
            part = Mrkdwn("*{}*").format(line)
            text_lines.append(Mrkdwn("Conformance {}").format(line))
            if regressions:
                part += Mrkdwn("\nRegressions:\n") + _bullets(regressions)
                text_lines += [Mrkdwn("  regression {}").format(r) for r in regressions[:MAX_LISTED]]
            if stale:
                part += Mrkdwn("\nStale entries:\n") + _bullets(stale)
                text_lines += [Mrkdwn("  stale {}").format(s) for s in stale[:MAX_LISTED]]
            parts.append(part)
        blocks.append(section(Mrkdwn("*Conformance*\n") + Mrkdwn("\n").join(parts)))

    contract = report.get("contract")
    if contract is not None:
        if contract.get("error"):
            body = Mrkdwn("*Contract*: {}").format(contract["error"])
            text_lines.append(Mrkdwn("Contract: {}").format(contract["error"]))
        else:
            breaking, models, others = contract_groups(contract)
            against = contract.get("baseline") or report.get("baseline_sdk_version")
            body = Mrkdwn("*Contract* against {}: ").format(against)
            if not (breaking or models or others):
                body += Mrkdwn("no changes")
            else:
                body += Mrkdwn("{} breaking, {} affect models, {} other").format(len(breaking), len(models), others)
            if breaking:
                body += Mrkdwn("\n_Breaks clients_\n") + _bullets(breaking)
            if models:
                body += Mrkdwn("\n_Affects models_\n") + _bullets(models)
            text_lines.append(
                Mrkdwn("Contract: {} breaking, {} affect models, {} other").format(len(breaking), len(models), others)
            )
            text_lines += [Mrkdwn("  breaking {}").format(b) for b in breaking[:MAX_LISTED]]
            text_lines += [Mrkdwn("  affects models {}").format(m) for m in models[:MAX_LISTED]]
            accepted = [_accepted_line(c) for c in contract.get("accepted") or []]
            if accepted:
                body += Mrkdwn("\n_Accepted ({}, not failing the run)_\n").format(len(accepted)) + _bullets(accepted)
                text_lines.append(Mrkdwn("Contract: {} accepted").format(len(accepted)))
                text_lines += [Mrkdwn("  accepted {}").format(a) for a in accepted[:MAX_LISTED]]
        blocks.append(section(body))

    evaluation = report.get("evaluation") or {}
    if evaluation.get("note"):
        note = escape(evaluation["note"])
        blocks.append(context(Mrkdwn("Models: {}").format(note)))
        text_lines.append(Mrkdwn("Models: {}").format(note))

    warnings = [_warning_line(w) for w in report.get("deprecation_warnings") or []]
    if warnings:
        blocks.append(section(Mrkdwn("*Deprecation warnings*\n") + _bullets(warnings)))
        text_lines += [Mrkdwn("Deprecation: {}").format(w) for w in warnings[:MAX_LISTED]]

    shared = result_line(report)
    if shared:
        blocks.append(context(shared[0]))
        text_lines.append(shared[1])

    footer = Mrkdwn("Took {} · run {}").format(_duration(report.get("seconds")), report.get("run_id", "?"))
    footer += _provenance(report)
    blocks.append(context(footer))
    text_lines.append(footer)
    return Mrkdwn("\n").join(text_lines), blocks


def result_notice(loaded: LoadedConfig, report: RunReport, stored_id: int | None = None) -> Notice:
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
    text: Mrkdwn,
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
