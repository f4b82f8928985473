"""The judge stage's contract step of a run: the server's contract snapshot (both eras) while it runs, diffed
against the baseline (the committed snapshot, or one taken the same way under `baseline_sdk_version` and
cached), steered by the team's and the server's severity levels and accept entries (the file's, then those made
in Slack); a change that breaks clients fails the run. The same steering re-judges a report from GitHub Actions."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from watcher.boundary.process import ServerProcess, StartResult
from watcher.config import LoadedConfig
from watcher.contract.accept import AcceptFile
from watcher.contract.diff import diff_snapshots
from watcher.contract.snapshot import SnapshotTarget, take_snapshot_sync
from watcher.core import progress, untrusted
from watcher.core.contract_doc import ContractDiff, SnapshotSummary
from watcher.core.errors import Cancelled, SuiteError
from watcher.core.run_report import RunReport
from watcher.core.timefmt import today_utc
from watcher.suites.build.env import EnvResult, env_key, locked
from watcher.suites.build.install import install
from watcher.suites.run.server import resolve_command, sandboxed, start_server
from watcher.suites.state import ERROR, FAIL, PASS, RunState, safe_name, worst


def snapshot_target(run: RunState, server: ServerProcess, env: EnvResult) -> SnapshotTarget:
    if server.url:
        return SnapshotTarget(url=server.url)
    return SnapshotTarget(
        command=sandboxed(run, resolve_command(run.server.start, env, None), env),
        env=server.child_env.env,
        cwd=env.project_dir,
        private_env=server.child_env.granted,
    )


def take_snapshot(run: RunState, server: ServerProcess, env: EnvResult, out_dir: Path) -> SnapshotSummary:
    """Snapshot both eras; raises when no era could be read (an era the server refuses is fine)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = take_snapshot_sync(
        snapshot_target(run, server, env),
        out_dir,
        era="both",
        timeout=run.server.timeouts.snapshot,
        client_profile_name=run.server.client_profiles,
    )
    eras = (summary or {}).get("eras") or {}
    failed = {era: info.get("status") for era, info in eras.items() if str(info.get("status")).startswith("error")}
    if eras and len(failed) == len(eras):
        raise SuiteError("; ".join(f"{era}: {status}" for era, status in failed.items()))
    return summary


def snapshot_candidate(run: RunState, server: ServerProcess, env: EnvResult, out_dir: Path) -> bool:
    if server.proc is not None and server.proc.poll() is not None:
        run.report["contract"] = {"error": "the server is no longer running; no snapshot taken"}
        return False
    progress.stage("contract snapshot")
    try:
        summary = take_snapshot(run, server, env, out_dir)
    except Exception as exc:  # no era could be read: the server under the new SDK
        run.check_cancel()
        run.report["contract"] = {"error": f"snapshot under {run.sdk_version} failed: {exc}"}
        run.mark(FAIL, f"contract snapshot under {run.sdk_version} failed: {exc}")
        return False
    run.report["snapshot"] = summary
    for era, info in (summary.get("eras") or {}).items():
        if str(info.get("status")).startswith("error"):
            run.mark(FAIL, f"contract snapshot under {run.sdk_version}, {era} era: {info.get('status')}")
    return True


def run_contract(run: RunState, candidate: Path) -> None:
    try:
        baseline, label = baseline_snapshot(run, candidate)
    except Cancelled:
        raise
    except Exception as exc:
        run.report["contract"] = {"error": f"baseline snapshot unavailable: {exc}"}
        run.mark(ERROR, f"baseline snapshot unavailable: {exc}")
        return
    run.check_cancel()
    progress.stage(f"contract diff against the baseline ({label})")
    try:
        diff = diff_snapshots(baseline, candidate, baseline_label=label, candidate_label=run.sdk_version)
    except Exception as exc:
        run.report["contract"] = {"error": f"diff failed: {exc}"}
        run.mark(ERROR, f"contract diff failed: {exc}")
        return
    try:
        diff = steer_contract(run, diff)
    except Exception as exc:  # a bad accept file is the team's to fix: named in the result
        run.report["contract"] = {"error": f"accept file: {exc}"}
        run.mark(ERROR, f"contract accept file: {exc}")
        return
    diff["baseline_snapshot"] = str(baseline)
    run.report["contract"] = diff
    reason = contract_reason(diff)
    if reason:
        run.mark(FAIL, reason)


def steer_contract(run: RunState, diff: ContractDiff) -> ContractDiff:
    """The team's and the server's severity overrides, then the server's accept file: accepted changes
    move under `accepted` and no longer fail the run."""
    from watcher.contract.accept import apply_levels, load_accept_file

    team = next((t for t in run.loaded.config.teams if t.name == run.server.team), None)
    levels: dict[str, str] = {**(team.contract.levels if team else {}), **run.server.contract.levels}
    diff = apply_levels(diff, levels)
    accept = run.server.accept
    file = load_accept_file(run.repo_path(accept), run.repo_root_of(accept)) if accept else None
    return accept_changes(run.loaded, run.server.name, diff, file)


def baseline_snapshot(run: RunState, candidate: Path) -> tuple[Path, str]:
    """The stored snapshot, or one taken the same way under baseline_sdk_version (cached)."""
    version = run.server.baseline_sdk_version
    if run.server.baseline_snapshot:
        stored = run.repo_path(run.server.baseline_snapshot)
        root = run.repo_root_of(run.server.baseline_snapshot)
        if root is not None:  # the team's committed snapshot: no link out of its repository, capped
            untrusted.check_tree(root, stored, limits=untrusted.SNAPSHOT)
        if not stored.is_dir():
            raise FileNotFoundError(f"baseline_snapshot folder does not exist: {stored}")
        return stored, version
    key = env_key(run.server.language, run.sdk_package, version, run.project, run.server.prepare)
    cache = run.envs_dir / safe_name(run.server.name) / "baseline-snapshots" / f"{safe_name(version)}-{key}"
    with locked(cache.with_name(cache.name + ".lock")):
        if not (cache / "complete").exists():
            _take_baseline_snapshot(run, cache, version, candidate)
    return cache, version


def _take_baseline_snapshot(run: RunState, cache: Path, version: str, candidate: Path) -> None:
    shutil.rmtree(cache, ignore_errors=True)
    if version == run.sdk_version:
        shutil.copytree(candidate, cache)
    else:
        env = install(run, version)
        if not env.ok:
            raise SuiteError(f"{run.sdk_package} {version} would not install: {env.error}\n{env.evidence}")
        logs = run.run_dir / "baseline"
        with start_server(run, env, logs) as server:
            progress.stage(f"baseline snapshot under {version}")
            started: StartResult = server.start(run.server.timeouts.start, run.cancel)
            run.check_cancel()
            if not started.ok:
                raise SuiteError(f"the server did not start under {version}: {started.error}\n{started.evidence}")
            take_snapshot(run, server, env, cache)
    (cache / "complete").write_text(version, encoding="utf-8")


_CONTRACT_REASON = re.compile(r"contract: \d+ change\(s\) that break clients")


def contract_reason(diff: ContractDiff) -> str | None:
    """The reason a steered diff fails a run (None: it does not)."""
    breaking = [c for c in diff.get("changes") or [] if c.get("breaksClients")]
    return f"contract: {len(breaking)} change(s) that break clients" if breaking else None


def accept_changes(
    loaded: LoadedConfig, server: str, diff: ContractDiff, file: AcceptFile | None, *, file_applied: bool = False
) -> ContractDiff:
    """The server's accept list applied to a diff: its file's entries, then those made in Slack (a Slack entry
    naming a change the file names is left out). The file's pass first, then Slack's on what is left: the same
    as one pass over the joined list, and it lets the watcher add Slack's to a report steered elsewhere by the
    file alone (`file_applied`: a run on GitHub Actions)."""
    from watcher.contract.accept import apply_acceptance
    from watcher.decisions.accepts import annotate, slack_accepts_with

    merged = slack_accepts_with(loaded, server, file)
    today = today_utc()
    if file is not None and not file_applied:
        diff = apply_acceptance(diff, file, today)
        # The file's own entries, so a watcher that adds Slack's to this report later knows which the file names.
        diff["acceptance"]["file_entries"] = [e.as_record() for e in file.entries]
    slack = merged.accept.entries[len(file.entries) if file is not None else 0 :]
    if slack:
        filed = diff.get("acceptance") or {}
        diff = apply_acceptance(diff, AcceptFile(merged.accept.path, slack), today)
        if filed:
            own = diff["acceptance"]
            diff["acceptance"] = {
                **filed,
                "file": merged.accept.path,
                "stale": [*(filed.get("stale") or []), *own["stale"]],
                "expired": [*(filed.get("expired") or []), *own["expired"]],
            }
    return annotate(diff, merged)


def file_of_report(contract: ContractDiff) -> AcceptFile | None:
    """The accept file a report was steered with, as the report tells it (None: it had none). A report
    written before `file_entries` existed names only its stale and expired entries."""
    from watcher.contract.accept import AcceptEntry

    acceptance = contract.get("acceptance")
    if not isinstance(acceptance, dict) or not acceptance.get("file"):
        return None
    listed = acceptance.get("file_entries")
    if not isinstance(listed, list):
        listed = [*(acceptance.get("stale") or []), *(acceptance.get("expired") or [])]
    entries = []
    for item in listed:
        try:
            entries.append(AcceptEntry.model_validate(item))
        except ValueError:
            continue  # an entry this version cannot read matches nothing here either
    return AcceptFile(str(acceptance["file"]), tuple(entries))


def add_slack_accepts(loaded: LoadedConfig, report: RunReport) -> RunReport:
    """A report steered elsewhere with its accept file only (GitHub Actions), with the server's Slack accepts
    added as a local run adds them, and its verdict judged again the way a local run judges it."""
    contract = report.get("contract")
    if not isinstance(contract, dict) or not isinstance(contract.get("changes"), list):
        return report  # no diff (an error or no snapshot): nothing to accept
    steered = accept_changes(loaded, str(report["server"]), contract, file_of_report(contract), file_applied=True)
    slack = (steered.get("acceptance") or {}).get("slack")
    if not slack:
        return report
    slack["applied_by"] = "watcher"
    if slack.get("from_slack"):
        labels = ", ".join(f"{s['label']} (by {s['by']})" for s in slack["from_slack"])
        steered["notes"] = [*steered["notes"], f"accept entries from Slack, applied by the watcher: {labels}"]
    reasons = [r for r in report.get("reasons") or [] if not _CONTRACT_REASON.fullmatch(str(r.get("reason")))]
    reason = contract_reason(steered)
    if reason:
        reasons.append({"verdict": FAIL, "reason": reason})
    verdict = worst(PASS, *(str(r["verdict"]) for r in reasons))
    if report.get("verdict") == ERROR:  # an error the reasons do not all say stays one
        verdict = ERROR
    return {**report, "contract": steered, "reasons": reasons, "verdict": verdict}
