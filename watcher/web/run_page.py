"""The data of `/runs/<id>`: one suite run in full, read from its stored report (and its run folder's logs)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watcher.clusters.view import RunCluster, run_cluster
from watcher.core.contract_doc import ContractChange
from watcher.core.run_report import RunReport, egress_refusals, egress_target
from watcher.core.store_schema import RunRow
from watcher.core.timefmt import parse_iso
from watcher.notify import keys
from watcher.web.context import WebContext, age
from watcher.web.overview import cell_state, trigger_label

LOG_TAIL_LINES = 30
SERVER_LOGS = (("server stderr", "server.stderr.log"), ("server stdout", "server.stdout.log"))


@dataclass(frozen=True)
class Reason:
    verdict: str
    reason: str


@dataclass(frozen=True)
class ConformanceSet:
    requirements: str
    scenarios: int | None
    passed: int | None
    failed: int | None
    expected_failures: list[str]
    unexpected_failures: list[str]
    stale_entries: list[str]
    not_scored: list[str]
    failure_messages: dict[str, str]
    note: str | None
    """An error or a skip: why the set has no result."""


@dataclass(frozen=True)
class ChangeRow:
    era: str
    list: str
    name: str
    path: str
    rule: str
    hint: str
    before: str
    after: str
    breaks_clients: bool
    affects_models: bool


@dataclass(frozen=True)
class ChangeGroup:
    title: str
    changes: list[ChangeRow]


@dataclass(frozen=True)
class SdkWarning:
    kind: str
    message: str
    count: int


@dataclass(frozen=True)
class LogTail:
    title: str
    text: str
    note: str | None = None
    """What the log means for the verdict, when a reader could take it the wrong way."""


TRACEBACK = "Traceback (most recent call last)"


def stderr_note(state: str, text: str) -> str | None:
    """A passing run whose server wrote to stderr (a traceback, most alarmingly): say the run still passed."""
    if state != "pass" or not text.strip():
        return None
    what = "this traceback" if TRACEBACK in text else "this"
    return f"The server wrote {what} to stderr; the run passed (no check failed and the server kept serving)."


@dataclass(frozen=True)
class EgressRow:
    """One request of an install room that its egress proxy refused (or, under `audit`, recorded and let through)."""

    at: str
    step: str
    target: str
    address: str
    rule: str
    outcome: str
    kind: str = "proxy"
    """How it was attempted: through the proxy, a direct connection, or a raw socket (`egress.Refusal.kind`)."""


@dataclass(frozen=True)
class Link:
    label: str
    url: str


@dataclass(frozen=True)
class RunPage:
    run_id: int
    server: str
    team: str
    sdk: str
    sdk_package: str
    sdk_version: str
    baseline_sdk_version: str
    state: str
    trigger: str
    trigger_label: str
    """The trigger in a word: release, baseline, manual, cli (a `check`), …"""
    queued: str | None
    finished: str | None
    age: str
    seconds: float | None
    reasons: list[Reason]
    conformance: list[ConformanceSet]
    contract_note: str | None
    contract_summary: str
    contract_groups: list[ChangeGroup]
    warnings: list[SdkWarning]
    logs: list[LogTail]
    source_commit: str | None
    slack: list[Link]
    egress: list[EgressRow] = field(default_factory=list)
    """The run's egress audit (`run_report.egress_refusals`: the install's and the conformance suite's install's)."""
    cluster: RunCluster | None = None
    """The failure cluster the result was filed in (watcher.clusters), when it failed."""


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _conformance(ctx: WebContext, entries: list[Any]) -> list[ConformanceSet]:
    sets = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        note = entry.get("error") or entry.get("skipped")
        sets.append(
            ConformanceSet(
                requirements=str(entry.get("requirements", "")),
                scenarios=entry.get("scenarios"),
                passed=entry.get("passed"),
                failed=entry.get("failed"),
                expected_failures=[str(x) for x in entry.get("expected_failures") or []],
                unexpected_failures=[str(x) for x in entry.get("unexpected_failures") or []],
                stale_entries=[str(x) for x in entry.get("stale_entries") or []],
                not_scored=[
                    f"{u.get('scenario')} ({u.get('reason')}, {'passed' if u.get('passed') else 'failed'})"
                    for u in entry.get("unscored") or []
                    if isinstance(u, dict)
                ],
                failure_messages={str(k): ctx.clean(v) for k, v in (entry.get("failure_messages") or {}).items()},
                note=ctx.clean(note) if note else None,
            )
        )
    return sets


def _change_groups(changes: list[ContractChange]) -> list[ChangeGroup]:
    """Grouped and ordered as the Markdown report groups them: what breaks clients first."""
    groups = (
        ("Breaks clients", [c for c in changes if c.get("breaksClients")]),
        ("Affects models", [c for c in changes if not c.get("breaksClients") and c.get("affectsModels")]),
        ("Other changes", [c for c in changes if not c.get("breaksClients") and not c.get("affectsModels")]),
    )
    return [
        ChangeGroup(
            title,
            [
                ChangeRow(
                    era=str(c.get("era") or ""),
                    list=str(c.get("list") or ""),
                    name=str(c.get("name") or ""),
                    path=str(c.get("path") or ""),
                    rule=str(c.get("rule") or c.get("kind") or ""),
                    hint=_text(c.get("hint")),
                    before=_text(c.get("before")),
                    after=_text(c.get("after")),
                    breaks_clients=bool(c.get("breaksClients")),
                    affects_models=bool(c.get("affectsModels")),
                )
                for c in group
            ],
        )
        for title, group in groups
        if group
    ]


def _logs(ctx: WebContext, report: RunReport, state: str) -> list[LogTail]:
    """The evidence: installer and start failures, a crash, and the tails of the server's own logs."""
    from watcher.boundary.process import tail

    logs = []
    for title, part in (("install", report.get("install")), ("start", report.get("start"))):
        if isinstance(part, dict) and part.get("evidence"):
            logs.append(LogTail(title, ctx.clean(part["evidence"])))
    exit_info = report.get("server_exit")
    if isinstance(exit_info, dict) and exit_info.get("evidence"):
        logs.append(LogTail(f"server exit (code {exit_info.get('code')})", ctx.clean(exit_info["evidence"])))
    run_dir = report.get("run_dir")
    if run_dir and Path(str(run_dir)).is_dir():
        for title, name in SERVER_LOGS:
            text = tail(Path(str(run_dir)) / name, LOG_TAIL_LINES)
            if text:
                note = stderr_note(state, text) if name == "server.stderr.log" else None
                logs.append(LogTail(f"{title} (last {LOG_TAIL_LINES} lines)", ctx.clean(text), note))
    if report.get("traceback"):
        logs.append(LogTail("watcher traceback", ctx.clean(report["traceback"])))
    return logs


def _egress(ctx: WebContext, report: RunReport) -> list[EgressRow]:
    return [
        EgressRow(
            at=ctx.clean(r.get("at", "")),
            step=ctx.clean(_egress_step(r, report)),
            target=ctx.clean(egress_target(r)),
            kind=ctx.clean(str(r.get("kind") or "proxy")),
            address=ctx.clean(r.get("address") or "not resolved"),
            rule=ctx.clean(r.get("rule", "")),
            outcome="let through (audit)" if r.get("let_through") else "refused",
        )
        for r in egress_refusals(report)
    ]


def _egress_step(refusal: dict[str, object], report: RunReport) -> str:
    """The refusal's step, with its server when that is not the run's own (the conformance suite's install)."""
    server, step = str(refusal.get("server") or ""), str(refusal.get("step") or "")
    return f"{server}: {step}" if server and server != report.get("server") else step


def _slack_links(ctx: WebContext, run: RunRow, team: str) -> list[Link]:
    from watcher.digest.sections.releases import thread_ref

    links = []
    for label, key in (
        ("result in Slack", keys.suite_result(run["server"], run["sdk_version"], team)),
        ("the release's thread", keys.release_alert(run["sdk"], run["sdk_version"], team)),
    ):
        ref = thread_ref(ctx.store, key)
        if ref is not None and ref.url:
            links.append(Link(label, ref.url))
    return links


def collect_run(ctx: WebContext, run_id: int) -> RunPage | None:
    run = ctx.store.run_by_id(run_id)
    if run is None:
        return None
    report: RunReport = run["report"] if isinstance(run["report"], dict) else {}
    config = ctx.loaded.config
    server = next((s for s in config.servers if s.name == run["server"]), None)
    team = str(report.get("team") or (server.team if server else ""))
    contract = report.get("contract")
    changes = contract.get("changes") if isinstance(contract, dict) else None
    state = cell_state(run)
    finished = parse_iso(run["finished"]) or parse_iso(run["started"]) or parse_iso(run["queued"])
    contract_note = None
    if isinstance(contract, dict) and contract.get("error"):
        contract_note = ctx.clean(contract["error"])
    elif contract is None and state in ("pass", "fail", "error"):
        contract_note = "no contract diff in this run"
    summary = ""
    if isinstance(contract, dict) and isinstance(changes, list):
        breaking = sum(1 for c in changes if c.get("breaksClients"))
        models = sum(1 for c in changes if c.get("affectsModels"))
        summary = (
            f"{contract.get('baseline')} → {contract.get('candidate')}: {len(changes)} change(s), "
            f"{breaking} break clients, {models} affect models"
        )
    source = report.get("source")
    return RunPage(
        run_id=int(run["id"]),
        server=str(run["server"]),
        team=team,
        sdk=str(run["sdk"]),
        sdk_package=str(report.get("sdk_package") or (config.sdk(run["sdk"]).package if server else "")),
        sdk_version=str(run["sdk_version"]),
        baseline_sdk_version=str(report.get("baseline_sdk_version") or (server.baseline_sdk_version if server else "")),
        state=state,
        trigger=str(run["trigger"] or ""),
        trigger_label=trigger_label(run["trigger"]),
        queued=run["queued"],
        finished=run["finished"],
        age=age(finished, ctx.now()),
        seconds=run["seconds"],
        reasons=[
            Reason(str(r.get("verdict", "")), ctx.clean(r.get("reason", "")))
            for r in report.get("reasons") or []
            if isinstance(r, dict)
        ],
        conformance=_conformance(ctx, report.get("conformance") or []),
        contract_note=contract_note,
        contract_summary=summary,
        contract_groups=_change_groups(changes) if isinstance(changes, list) else [],
        warnings=[
            SdkWarning(str(w.get("kind", "")), ctx.clean(w.get("message", "")), int(w.get("count", 1)))
            for w in report.get("deprecation_warnings") or []
            if isinstance(w, dict)
        ],
        logs=_logs(ctx, report, state),
        source_commit=str(source.get("commit")) if isinstance(source, dict) and source.get("commit") else None,
        slack=_slack_links(ctx, run, team),
        egress=_egress(ctx, report),
        cluster=run_cluster(report),
    )
