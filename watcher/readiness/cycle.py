"""One readiness pass: poll the suite, read its newest version, run new sets against every server, tell teams.

Results are kept in the state (``KV_RESULTS``): set → {revision, release, servers: {server: entry}}. A server is
re-run only when its SDK version or the suite version changed; a team hears only about servers whose outcome
(status and the scenarios to fix) changed. A newest suite version that is not the pinned one is also tried
as a candidate for the sets servers already run, beside the pinned one (``candidate``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from datetime import date

import httpx

from watcher.config import LoadedConfig
from watcher.core.errors import ConformanceError, ToolMissing
from watcher.core.run_report import RunReport
from watcher.core.store import Store
from watcher.core.timefmt import iso, today_utc, utcnow
from watcher.readiness import candidate as candidate_mod
from watcher.readiness.judge import readiness_step
from watcher.readiness.model import KV_RESULTS, PassSummary, ReadinessEntry, Results, stored_results
from watcher.readiness.notices import team_readiness_notice
from watcher.readiness.plan import Target, new_sets, rc_targets, sdk_version_for
from watcher.readiness.suite import SUITE_SOURCE, SuiteVersion, inspect, install, poll_suite, suite_package
from watcher.readiness.view import KV_WINDOWS
from watcher.sources.versions import sort_key
from watcher.spec.revisions import SpecRevision
from watcher.spec.view import load_spec_view
from watcher.suites.runner import ServerStep, run_step
from watcher.suites.settings import Server

log = logging.getLogger(__name__)

StepRunner = Callable[[LoadedConfig, str, str, ServerStep, threading.Event | None], RunReport]
"""(config, server, SDK version, the step, the stop event) -> the run's report."""


def _run_step(
    loaded: LoadedConfig, server: str, version: str, step: ServerStep, stop: threading.Event | None
) -> RunReport:
    return run_step(loaded, server, version, step, cancel=stop)


def newest_suite_version(store: Store) -> str | None:
    listed = [r["version"] for r in store.versions_of(SUITE_SOURCE) if not r["yanked"]]
    return max(listed, key=lambda v: sort_key("npm", v)) if listed else None


def outcome_of(entry: ReadinessEntry) -> tuple[str, tuple[str, ...]]:
    """What a team hears about: the status and the scenarios to fix (not versions or timings)."""
    return entry["status"], tuple(sorted(i["scenario"] for i in entry.get("to_fix", [])))


def readiness_entry(
    server: Server, sdk_version: str | None, suite: SuiteVersion, report: RunReport | None
) -> ReadinessEntry:
    entry: ReadinessEntry = {
        "sdk": server.sdk,
        "sdk_version": sdk_version,
        "suite_version": suite.version,
        "checked": iso(utcnow()),
        "to_fix": [],
    }
    if sdk_version is None:
        return {**entry, "status": "not_testable", "reason": f"no {server.sdk} SDK version known yet"}
    if report is None:
        return {**entry, "status": "not_testable", "reason": "not run"}
    step = report.get("step")
    if not step or step.get("skipped") or step.get("error"):
        why = (step or {}).get("skipped") or (step or {}).get("error")
        if not why:
            why = "; ".join(r["reason"] for r in report.get("reasons", [])) or "the server could not be run"
        return {**entry, "status": "not_testable", "reason": str(why)[:300], "run_dir": report.get("run_dir")}
    status = "to_fix" if step["to_fix"] else "ready"
    return {
        **entry,
        "status": status,
        "to_fix": step["to_fix"],
        "scenarios": step.get("scenarios"),
        "passed": step.get("passed"),
        "run_dir": report.get("run_dir"),
    }


def check_readiness(
    loaded: LoadedConfig,
    store: Store,
    *,
    today: date | None = None,
    poll: bool = True,
    client: httpx.AsyncClient | None = None,
    runner: StepRunner = _run_step,
    stop: threading.Event | None = None,
) -> PassSummary:
    """One pass; returns what it did (for the log and the CLI). Outside failures are in the answer, not raised.
    `stop` (SIGINT, SIGTERM, the service stopping) cancels the run under way; no further server is run."""
    stop = stop or threading.Event()
    config = loaded.config
    today = today or today_utc()
    summary: PassSummary = {"ok": True, "suite_version": None, "sets": {}, "runs": [], "candidate": []}
    if poll:
        outcome = asyncio.run(poll_suite(loaded, store, client))
        if not outcome.ok:
            summary.update({"ok": False, "error": f"suite poll: {outcome.error}"})
    newest = newest_suite_version(store)
    if newest is None:
        summary.setdefault("error", "no version of the conformance suite known yet")
        summary["ok"] = False
        return summary
    suite = inspect(loaded, store, newest, stop)
    summary["suite_version"] = newest
    summary["egress_refused"] = list(suite.egress_refused)  # what the suite's install room's proxy refused
    if stop.is_set():
        summary.update({"ok": False, "stopped": True, "error": "stopped before the pass was complete"})
        return summary
    if suite.error:
        summary.update({"ok": False, "error": f"suite {newest}: {suite.error}"})
        return summary
    spec = load_spec_view(config, store, today)
    update_windows(store, spec.revisions)
    targets = new_sets(config, list(suite.sets), spec.calendar, spec.revisions, today)
    results = close_released(store, spec.revisions)
    for target in targets:
        summary["sets"][target.set_name] = target.revision
        _run_target(loaded, store, suite, target, results, runner, summary, stop)
    _, pinned = suite_package(loaded)
    if pinned and newest != pinned and not stop.is_set():
        summary["candidate"] = candidate_mod.try_candidate(loaded, store, pinned, newest, runner, stop)
    if stop.is_set():
        summary.update({"ok": False, "stopped": True, "error": "stopped before the pass was complete"})
    return summary


def close_released(store: Store, revisions: list[SpecRevision]) -> Results:
    """Drop the results of revisions that are out (their readiness window closed); the rest, as stored."""
    results = stored_results(store)
    released = {r.revision for r in revisions if not r.prerelease}
    kept = {name: stored for name, stored in results.items() if stored.get("revision") not in released}
    if kept != results:
        store.set_kv(KV_RESULTS, kept)
    return kept


def update_windows(store: Store, revisions: list[SpecRevision]) -> None:
    """A spec RC opens its revision's readiness window; the final release closes it."""
    open_now = {
        rev: next(r.tag for r in revisions if r.revision == rev and r.prerelease) for rev in rc_targets(revisions)
    }
    if open_now != (store.get_kv(KV_WINDOWS) or {}):
        store.set_kv(KV_WINDOWS, open_now)


def _run_target(
    loaded: LoadedConfig,
    store: Store,
    suite: SuiteVersion,
    target: Target,
    results: Results,
    runner: StepRunner,
    summary: PassSummary,
    stop: threading.Event,
) -> None:
    config = loaded.config
    stored = results.setdefault(target.set_name, {"servers": {}})
    stored.update({"revision": target.revision, "release": target.release.isoformat()})
    try:
        tool = install(loaded, suite.version, cancel=stop)
    except (ConformanceError, ToolMissing) as exc:
        summary.update({"ok": False, "error": f"suite {suite.version}: {exc}"})
        return
    changed: dict[str, dict[str, ReadinessEntry]] = {}
    for server in config.servers:
        if stop.is_set():
            break
        sdk_version = sdk_version_for(config, store, server)
        old = stored["servers"].get(server.name)
        if old and old.get("sdk_version") == sdk_version and old.get("suite_version") == suite.version:
            continue
        report = None
        if sdk_version is not None:
            step = readiness_step(tool, target.set_name, server.timeouts.suite)
            report = runner(loaded, server.name, sdk_version, step, stop)
            if stop.is_set():
                break  # cancelled half-way: not a result
        entry = readiness_entry(server, sdk_version, suite, report)
        stored["servers"][server.name] = entry
        summary["runs"].append({"server": server.name, "set": target.set_name, "status": entry["status"]})
        if old is None or outcome_of(old) != outcome_of(entry):
            changed.setdefault(server.team, {})[server.name] = entry
        store.set_kv(KV_RESULTS, results)  # after each server: a restart keeps what was learnt
    for team, entries in changed.items():
        team_readiness_notice(store, config, team, target.revision, target.release.isoformat(), entries)
