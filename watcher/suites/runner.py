"""One server x one SDK version: install, start, conformance per requirement set, contract, verdict.

`run_check` never raises for an outside failure: a beta that will not install or a server that
will not start under it is a "fail" with the evidence; a step the watcher itself could not carry
out (the suite would not install, a baseline snapshot could not be taken) is an "error".
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import shutil
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from watcher.config import LoadedConfig, WatcherConfig, secret_env_names
from watcher.contract.accept import AcceptFile
from watcher.contract.diff import diff_snapshots
from watcher.contract.snapshot import SnapshotTarget, take_snapshot_sync
from watcher.core import progress, vault
from watcher.core.errors import Cancelled, ConformanceError, SuiteError, ToolMissing
from watcher.core.timefmt import iso, today_utc, utcnow
from watcher.sources import versions
from watcher.suites.build import prebuild, toolchain
from watcher.suites.build.declared import substitute
from watcher.suites.build.env import EnvResult, env_key, locked, prepare_env
from watcher.suites.judge import conformance, deprecations
from watcher.suites.run import sandbox
from watcher.suites.run.process import ServerProcess, StartResult, free_port, scrubbed_env, tail
from watcher.suites.run.server_env import ServerEnvError, granted_env
from watcher.suites.settings import Server
from watcher.suites.source import checkout

PASS, FAIL, ERROR = "pass", "fail", "error"
_RANK = {PASS: 0, FAIL: 1, ERROR: 2}
REPORT_FILE = "report.json"


def sdk_package_of(config: WatcherConfig, server: Server) -> str:
    if server.sdk_package:
        return server.sdk_package
    return config.sdk(server.sdk).package


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def new_run_id(sdk_version: str) -> str:
    stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{_safe(sdk_version)}-{secrets.token_hex(2)}"


def resolve_command(start: Sequence[str], env: EnvResult, port: int | None) -> list[str]:
    """The configured start command, run inside the environment: `python`, `node`, `npm` and the
    environment's own executables resolve to the environment's copies."""
    args = substitute(start, version=env.sdk_version, package=env.sdk_package, workdir=env.project_dir or "", port=port)
    exe, rest = args[0], args[1:]
    if exe in ("python", "python3") and env.language == "python":
        return [str(Path(env.bin_dirs[0]) / "python"), *rest]
    if exe == "node":
        return [toolchain.node(), *rest]
    if exe == "npm":
        return [*toolchain.npm_command(), *rest]
    if "/" not in exe:
        for folder in env.bin_dirs:
            candidate = Path(folder) / exe
            if candidate.exists():
                return [str(candidate), *rest]
    return args


def server_room_paths(loaded: LoadedConfig, env: EnvResult) -> tuple[list[str | Path], list[str | Path]]:
    """A server's room: its environment's folder (sealed, read-only) and the runtime it runs on are read;
    the state folder and the secret files are masked should they lie inside one of those."""
    config = loaded.config
    readable: list[str | Path] = [Path(env.project_dir).parent, *env.bin_dirs, *toolchain.runtime_paths()]
    slack = config.slack
    hidden: list[str | Path] = [
        loaded.resolve(config.state).parent,
        *(f for f in (slack.token_file, slack.webhook_file) if f),
    ]
    if config.http.auth_token_file:
        hidden.append(config.http.auth_token_file)
    return readable, hidden


def _worst(*verdicts: str) -> str:
    return max(verdicts, key=lambda v: _RANK[v])


class _Run:
    """The state of one check while it runs; `report` is what gets stored."""

    def __init__(self, loaded: LoadedConfig, server: Server, sdk_version: str, cancel: threading.Event | None):
        self.loaded = loaded
        self.config = loaded.config
        self.server = server
        self.sdk_version = sdk_version
        self.cancel = cancel
        self.secret_names = secret_env_names(self.config)
        self.sdk_package = sdk_package_of(self.config, server)
        self.envs_dir = loaded.resolve(self.config.suites.envs_dir)
        self.run_id = new_run_id(sdk_version)
        self.server_runs = loaded.resolve(self.config.suites.runs_dir) / _safe(server.name)
        self.run_dir = self.server_runs / self.run_id
        # A git source replaces these once fetched (fetch_source); a path server has them now.
        self.repo_root: Path | None = None
        self.project = loaded.resolve(server.path) if server.path else self.run_dir / "source"
        self._granted: dict[str, str] | None = None
        self.prebuilt: set[str] = set()
        """SDK versions whose environment a pre-build made (or failed to make) before this run asked."""
        self.sandbox = sandbox.choose(self.config.suites.sandbox)
        self.verdict = PASS
        self.report: dict[str, Any] = {
            "server": server.name,
            "team": server.team,
            "sdk": server.sdk,
            "sdk_package": self.sdk_package,
            "sdk_version": sdk_version,
            "baseline_sdk_version": server.baseline_sdk_version,
            "language": server.language,
            "transport": server.transport,
            "executor": "local",
            "source": None,
            "run_id": self.run_id,
            "run_dir": str(self.run_dir),
            "started_at": iso(utcnow()),
            "verdict": None,
            "reasons": [],
            "install": None,
            "start": None,
            "conformance": [],
            "contract": None,
            "deprecation_warnings": [],
            "seconds": None,
            "sandbox": self.sandbox.to_json(),
            "protection": (vault.current() or vault.Protection(False, "not sealed (not started by the CLI)")).to_json(),
        }

    # --- verdict bookkeeping ----------------------------------------------------------------------

    def mark(self, verdict: str, reason: str) -> None:
        self.verdict = _worst(self.verdict, verdict)
        self.report["reasons"].append({"verdict": verdict, "reason": reason})

    def repo_path(self, configured: str) -> Path:
        """A configured file of the server's: inside the checked-out repository for a git source."""
        if self.repo_root is not None and not Path(configured).is_absolute():
            return self.repo_root / configured
        return self.loaded.resolve(configured)

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()

    # --- steps --------------------------------------------------------------------------------------

    def fetch_source(self) -> bool:
        """Check out the configured commit into the run's folder; False (an error result) when it fails."""
        source = self.server.source
        if source is None and self.server.path is None:
            self.mark(ERROR, "the server has no path or source here (its executor runs it on GitHub Actions)")
            return False
        if source is None:
            return True
        progress.stage(f"fetching the source ({checkout.display_url(source.git)} {source.ref})")
        try:
            token = checkout.read_token(self.loaded, self.server, vault.environ())
        except checkout.CheckoutError as exc:
            self.report["source"] = {"ok": False, "git": checkout.display_url(source.git), "error": str(exc)}
            self.mark(ERROR, f"source: {exc}")
            return False
        result = checkout.checkout(
            checkout.fetch_url(self.loaded, source),
            source,
            cache_root=self.loaded.resolve(self.config.suites.git_cache_dir),
            dest=self.run_dir / "source",
            token=token,
            timeout=self.server.timeouts.install,
            secret_names=self.secret_names,
            cancel=self.cancel,
            protocols=self.config.suites.git_protocols,
        )
        self.report["source"] = result.as_dict()
        if not result.ok:
            self.check_cancel()
            self.mark(ERROR, f"source: {result.error}")
            return False
        self.repo_root, self.project = Path(result.root), Path(result.project)
        return True

    def install(self, version: str) -> EnvResult:
        began = time.monotonic()
        progress.stage(f"installing {self.server.name} with {self.sdk_package} {version}")
        early = prebuild.prebuilt(self.server.name, version, self.envs_dir)  # waits for a build under way
        if early is not None:
            self.prebuilt.add(version)
            if not early.ok:
                return early  # the pre-build's failure is this run's evidence: no second attempt
        env = prepare_env(
            server_name=self.server.name,
            language=self.server.language,
            project=self.project,
            sdk_package=self.sdk_package,
            sdk_version=version,
            envs_dir=self.envs_dir,
            timeout=self.server.timeouts.install,
            secret_names=self.secret_names,
            cancel=self.cancel,
            prepare=self.server.prepare,
            boundary=self.sandbox,
        )
        env.seconds = time.monotonic() - began  # waiting for a pre-build is build time too
        return env

    def granted(self) -> dict[str, str]:
        """The server's env_from / env_files values, read once per run; raises ServerEnvError."""
        if self._granted is None:
            self._granted = granted_env(self.loaded, self.server, vault.environ())
        return self._granted

    def room_paths(self, env: EnvResult) -> tuple[list[str | Path], list[str | Path]]:
        """What a server's room reads (its sealed environment and the tools it runs on) and what is masked."""
        return server_room_paths(self.loaded, env)

    def sandboxed(self, command: list[str], env: EnvResult) -> list[str]:
        """A stdio server's command inside a room with no network (unchanged when there is no sandbox)."""
        readable, hidden = self.room_paths(env)
        return self.sandbox.wrap(command, cwd=env.project_dir, readable=readable, hidden=hidden)

    def start_server(self, env: EnvResult, log_dir: Path) -> ServerProcess:
        port = free_port() if self.server.transport == "http" else None
        child = scrubbed_env(
            secret_names=self.secret_names, extra=self.server.env, path_prepend=env.bin_dirs, granted=self.granted()
        )
        readable, hidden = self.room_paths(env)
        return ServerProcess(
            resolve_command(self.server.start, env, port),
            cwd=env.project_dir,
            env=child,
            log_dir=log_dir,
            transport=self.server.transport,
            http_path=self.server.http_path,
            port=port,
            launcher=self.sandbox.room(readable=readable, hidden=hidden),
        )

    def snapshot_target(self, server: ServerProcess, env: EnvResult) -> SnapshotTarget:
        if server.url:
            return SnapshotTarget(url=server.url)
        return SnapshotTarget(
            command=self.sandboxed(resolve_command(self.server.start, env, None), env),
            env=server.child_env.env,
            cwd=env.project_dir,
            private_env=server.child_env.granted,
        )

    def take_snapshot(self, server: ServerProcess, env: EnvResult, out_dir: Path) -> dict[str, Any]:
        """Snapshot both eras; raises when no era could be read (an era the server refuses is fine)."""
        out_dir.mkdir(parents=True, exist_ok=True)
        summary = take_snapshot_sync(
            self.snapshot_target(server, env),
            out_dir,
            era="both",
            timeout=self.server.timeouts.snapshot,
            client_profile_name=self.server.client_profiles,
        )
        eras = (summary or {}).get("eras") or {}
        failed = {era: info.get("status") for era, info in eras.items() if str(info.get("status")).startswith("error")}
        if eras and len(failed) == len(eras):
            raise SuiteError("; ".join(f"{era}: {status}" for era, status in failed.items()))
        return summary

    def run(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.check_cancel()
        refusal = version_refusal(self.config, self.server, self.sdk_version)
        if refusal:  # an outside string is never substituted into an install, prepare or start command
            self.mark(ERROR, refusal)
            return
        if self.sandbox.refused:  # asked for, not available: never run the server unprotected instead
            self.mark(ERROR, self.sandbox.reason)
            return
        try:
            self.granted()
        except ServerEnvError as exc:  # the watcher cannot give the server what it needs: no verdict on the SDK
            self.mark(ERROR, str(exc))
            return
        if not self.fetch_source():
            return
        env = self.install(self.sdk_version)
        self.report["install"] = {**env.as_dict(), "prebuilt": self.sdk_version in self.prebuilt}
        if not env.ok:
            self.check_cancel()
            if self.server.language == "other":  # the team's own build failed: no verdict on the SDK
                self.mark(ERROR, f"{self.sdk_package} {self.sdk_version}: {env.error}")
            else:
                self.mark(FAIL, f"{self.sdk_package} {self.sdk_version}: install failed: {env.error}")
            return
        self.check_cancel()
        candidate_snapshot = self.run_dir / "snapshot"
        with self.start_server(env, self.run_dir) as server:
            progress.stage(f"starting the server under {self.sdk_package} {self.sdk_version}")
            started = server.start(self.server.timeouts.start, self.cancel)
            self.report["start"] = started.as_dict()
            if not started.ok:
                self.check_cancel()
                self.mark(
                    FAIL, f"the server did not start under {self.sdk_package} {self.sdk_version}: {started.error}"
                )
                self.report["deprecation_warnings"] = self.scan_warnings()
                return
            self.run_conformance(server)
            self.check_cancel()
            snapshot_ok = self.snapshot_candidate(server, env, candidate_snapshot)
        self.report["deprecation_warnings"] = self.scan_warnings()
        self.check_cancel()
        if snapshot_ok:
            self.run_contract(candidate_snapshot)

    def run_conformance(self, server: ServerProcess) -> None:
        revisions = self.server.requirements
        if not revisions:
            return
        if server.url is None:
            self.report["conformance"] = [
                {"requirements": r, "skipped": "the conformance suite tests servers over HTTP only"} for r in revisions
            ]
            return
        settings = self.config.conformance
        began = time.monotonic()
        progress.stage(f"getting the conformance suite ({settings.package})")
        try:
            tool = conformance.ensure_conformance(
                settings.package,
                self.envs_dir / "_tools",
                registry=settings.npm_registry,
                timeout=self.server.timeouts.install,
                secret_names=self.secret_names,
                cancel=self.cancel,
                boundary=self.sandbox,
            )
        except (ConformanceError, ToolMissing) as exc:
            self.check_cancel()
            evidence = getattr(exc, "evidence", "")
            self.report["conformance"] = [
                {"requirements": r, "error": str(exc), "evidence": evidence} for r in revisions
            ]
            self.mark(ERROR, f"conformance suite unavailable: {exc}")
            return
        self.report["conformance_tool"] = {
            "package": tool.package,
            "version": tool.version,
            "seconds": round(time.monotonic() - began, 2),
        }
        configured = self.repo_path(self.server.expected_failures) if self.server.expected_failures else None
        for revision in revisions:
            self.check_cancel()
            baseline_path = conformance.expected_failures_path(configured, revision)
            progress.stage(f"conformance suite, requirement set {revision}")
            result = conformance.run_requirement_set(
                tool,
                url=server.url,
                revision=revision,
                baseline_path=baseline_path,
                out_dir=self.run_dir / "conformance" / revision,
                timeout=self.server.timeouts.suite,
                secret_names=self.secret_names,
                cancel=self.cancel,
            )
            self.report["conformance"].append(result)
            self.check_cancel()
            if result.get("error"):
                self.mark(ERROR, f"conformance {revision}: {result['error']}")
            elif not result["ok"]:
                parts = []
                if result["unexpected_failures"]:
                    parts.append(f"{len(result['unexpected_failures'])} unexpected failure(s)")
                if result["stale_entries"]:
                    parts.append(f"{len(result['stale_entries'])} stale expected-failure entries")
                self.mark(FAIL, f"conformance {revision}: " + ", ".join(parts))
            if server.proc is not None and server.proc.poll() is not None:
                self.mark(FAIL, f"the server exited (code {server.proc.returncode}) during conformance {revision}")
                self.report.setdefault("server_exit", {"code": server.proc.returncode, "evidence": server.evidence()})
                return

    def snapshot_candidate(self, server: ServerProcess, env: EnvResult, out_dir: Path) -> bool:
        if server.proc is not None and server.proc.poll() is not None:
            self.report["contract"] = {"error": "the server is no longer running; no snapshot taken"}
            return False
        progress.stage("contract snapshot")
        try:
            summary = self.take_snapshot(server, env, out_dir)
        except Exception as exc:  # no era could be read: the server under the new SDK
            self.check_cancel()
            self.report["contract"] = {"error": f"snapshot under {self.sdk_version} failed: {exc}"}
            self.mark(FAIL, f"contract snapshot under {self.sdk_version} failed: {exc}")
            return False
        self.report["snapshot"] = summary
        for era, info in (summary.get("eras") or {}).items():
            if str(info.get("status")).startswith("error"):
                self.mark(FAIL, f"contract snapshot under {self.sdk_version}, {era} era: {info.get('status')}")
        return True

    def run_contract(self, candidate: Path) -> None:
        try:
            baseline, label = self.baseline_snapshot(candidate)
        except Cancelled:
            raise
        except Exception as exc:
            self.report["contract"] = {"error": f"baseline snapshot unavailable: {exc}"}
            self.mark(ERROR, f"baseline snapshot unavailable: {exc}")
            return
        self.check_cancel()
        progress.stage(f"contract diff against the baseline ({label})")
        try:
            diff = diff_snapshots(baseline, candidate, baseline_label=label, candidate_label=self.sdk_version)
        except Exception as exc:
            self.report["contract"] = {"error": f"diff failed: {exc}"}
            self.mark(ERROR, f"contract diff failed: {exc}")
            return
        try:
            diff = self.steer_contract(diff)
        except Exception as exc:  # a bad accept file is the team's to fix: named in the result
            self.report["contract"] = {"error": f"accept file: {exc}"}
            self.mark(ERROR, f"contract accept file: {exc}")
            return
        diff["baseline_snapshot"] = str(baseline)
        self.report["contract"] = diff
        reason = contract_reason(diff)
        if reason:
            self.mark(FAIL, reason)

    def steer_contract(self, diff: dict[str, Any]) -> dict[str, Any]:
        """The team's and the server's severity overrides, then the server's accept file: accepted changes
        move under `accepted` and no longer fail the run."""
        from watcher.contract.accept import apply_levels, load_accept_file

        team = next((t for t in self.loaded.config.teams if t.name == self.server.team), None)
        levels: dict[str, str] = {**(team.contract.levels if team else {}), **self.server.contract.levels}
        diff = apply_levels(diff, levels)
        file = load_accept_file(self.repo_path(self.server.accept)) if self.server.accept else None
        return accept_changes(self.loaded, self.server.name, diff, file)

    def baseline_snapshot(self, candidate: Path) -> tuple[Path, str]:
        """The stored snapshot, or one taken the same way under baseline_sdk_version (cached)."""
        version = self.server.baseline_sdk_version
        if self.server.baseline_snapshot:
            stored = self.repo_path(self.server.baseline_snapshot)
            if not stored.is_dir():
                raise FileNotFoundError(f"baseline_snapshot folder does not exist: {stored}")
            return stored, version
        key = env_key(self.server.language, self.sdk_package, version, self.project, self.server.prepare)
        cache = self.envs_dir / _safe(self.server.name) / "baseline-snapshots" / f"{_safe(version)}-{key}"
        with locked(cache.with_name(cache.name + ".lock")):
            if not (cache / "complete").exists():
                self._take_baseline_snapshot(cache, version, candidate)
        return cache, version

    def _take_baseline_snapshot(self, cache: Path, version: str, candidate: Path) -> None:
        shutil.rmtree(cache, ignore_errors=True)
        if version == self.sdk_version:
            shutil.copytree(candidate, cache)
        else:
            env = self.install(version)
            if not env.ok:
                raise SuiteError(f"{self.sdk_package} {version} would not install: {env.error}\n{env.evidence}")
            logs = self.run_dir / "baseline"
            with self.start_server(env, logs) as server:
                progress.stage(f"baseline snapshot under {version}")
                started: StartResult = server.start(self.server.timeouts.start, self.cancel)
                self.check_cancel()
                if not started.ok:
                    raise SuiteError(f"the server did not start under {version}: {started.error}\n{started.evidence}")
                self.take_snapshot(server, env, cache)
        (cache / "complete").write_text(version, encoding="utf-8")

    def scan_warnings(self) -> list[dict[str, Any]]:
        return deprecations.scan_files([self.run_dir / "server.stderr.log", self.run_dir / "server.stdout.log"])

    # --- the end of a run -----------------------------------------------------------------------------

    def finish(self, started: float) -> dict[str, Any]:
        self.report["verdict"] = self.verdict
        self.report["seconds"] = round(time.monotonic() - started, 2)
        with contextlib.suppress(OSError):
            (self.run_dir / REPORT_FILE).write_text(json.dumps(self.report, indent=2, default=str), encoding="utf-8")
        prune_runs(self.server_runs, self.config.suites.keep_runs)
        return self.report


_CONTRACT_REASON = re.compile(r"contract: \d+ change\(s\) that break clients")


def contract_reason(diff: dict[str, Any]) -> str | None:
    """The reason a steered diff fails a run (None: it does not)."""
    breaking = [c for c in diff.get("changes") or [] if c.get("breaksClients")]
    return f"contract: {len(breaking)} change(s) that break clients" if breaking else None


def accept_changes(
    loaded: LoadedConfig, server: str, diff: dict[str, Any], file: AcceptFile | None, *, file_applied: bool = False
) -> dict[str, Any]:
    """The server's accept list applied to a diff: its file's entries, then those made in Slack (a Slack entry
    naming a change the file names is left out). The file's pass first, then Slack's on what is left: the same
    as one pass over the joined list, and it lets the watcher add Slack's to a report steered elsewhere by the
    file alone (`file_applied`: a run on GitHub Actions)."""
    from watcher.contract.accept import apply_acceptance
    from watcher.slackapp.accepts import annotate, slack_accepts_with

    merged = slack_accepts_with(loaded, server, file)
    today = today_utc()
    if file is not None and not file_applied:
        diff = apply_acceptance(diff, file, today)
        # The file's own entries, so a watcher that adds Slack's to this report later knows which the file names.
        diff["acceptance"]["file_entries"] = [
            e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in file.entries
        ]
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


def file_of_report(contract: dict[str, Any]) -> AcceptFile | None:
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


def add_slack_accepts(loaded: LoadedConfig, report: dict[str, Any]) -> dict[str, Any]:
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
    verdict = _worst(PASS, *(str(r["verdict"]) for r in reasons))
    if report.get("verdict") == ERROR:  # an error the reasons do not all say stays one
        verdict = ERROR
    return {**report, "contract": steered, "reasons": reasons, "verdict": verdict}


def prune_runs(server_runs: Path, keep: int) -> list[Path]:
    """Keep the newest `keep` run folders of one server (run ids sort by time)."""
    if not server_runs.is_dir():
        return []
    runs = sorted((p for p in server_runs.iterdir() if p.is_dir()), key=lambda p: p.name)
    removed = runs[: max(0, len(runs) - keep)]
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def version_refusal(config: WatcherConfig, server: Server, version: str) -> str | None:
    """Why `version` may not be run for `server` (versions.run_refusal under its SDK's registry); None: it may."""
    registry = next((s.registry for s in config.sdks if s.name == server.sdk), None)
    if registry is None:
        return f"servers.{server.name}.sdk: no SDK named {server.sdk!r}"
    problem = versions.run_refusal(registry, version)
    return f"{server.sdk} SDK: {problem}" if problem else None


def run_check(
    loaded: LoadedConfig, server_name: str, sdk_version: str, *, cancel: threading.Event | None = None
) -> dict[str, Any]:
    """Run the suites of one configured server against one SDK version and return the report.

    Raises ConfigError only for an unknown server name; everything else ends up in the report.
    """
    started = time.monotonic()
    server = loaded.config.server(server_name)
    run = _Run(loaded, server, sdk_version, cancel)
    try:
        run.run()
    except Cancelled:
        run.mark(ERROR, "cancelled")
    except Exception as exc:  # a bug of ours must not take the worker down; the report keeps the trace
        run.mark(ERROR, f"internal error: {type(exc).__name__}: {exc}")
        run.report["traceback"] = traceback.format_exc(limit=8)
    return run.finish(started)


class _StepRun(_Run):
    """Install and start the server as a check does, then run only `step` against its URL (no contract)."""

    def __init__(
        self, loaded: LoadedConfig, server: Server, sdk_version: str, step: ServerStep, cancel: threading.Event | None
    ):
        super().__init__(loaded, server, sdk_version, cancel)
        self.step = step

    def run_conformance(self, server: ServerProcess) -> None:
        if server.url is None:
            self.report["step"] = {"skipped": "the conformance suite tests servers over HTTP only"}
            return
        self.report["step"] = self.step(server.url, self.run_dir / "step", self.secret_names, self.cancel)

    def snapshot_candidate(self, server: ServerProcess, env: EnvResult, out_dir: Path) -> bool:
        return False


ServerStep = Callable[[str, Path, set[str], threading.Event | None], dict[str, Any]]
"""(server URL, a folder for its output, secret names to keep out, cancel) -> the step's result."""


def run_step(
    loaded: LoadedConfig,
    server_name: str,
    sdk_version: str,
    step: ServerStep,
    *,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    """Like run_check, but with `step` in place of the configured sets and the contract (readiness runs).

    The report's `step` holds what the step returned; `verdict` says whether install and start worked.
    """
    started = time.monotonic()
    run = _StepRun(loaded, loaded.config.server(server_name), sdk_version, step, cancel)
    try:
        run.run()
    except Cancelled:
        run.mark(ERROR, "cancelled")
    except Exception as exc:  # a bug of ours must not take the worker down; the report keeps the trace
        run.mark(ERROR, f"internal error: {type(exc).__name__}: {exc}")
        run.report["traceback"] = traceback.format_exc(limit=8)
    return run.finish(started)


def read_report(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / REPORT_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


__all__ = ["ERROR", "FAIL", "PASS", "prune_runs", "read_report", "resolve_command", "run_check", "run_step", "tail"]
