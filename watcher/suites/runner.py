"""One server x one SDK version, taken through the stages in order: source (`source/`: the code from git),
build (`build/`: the environment), run (`run/`: the server started inside the run boundary), judge (`judge/`:
conformance per requirement set and the contract while it runs, the diff once it stopped), then the verdict.
This module only sequences them and records the run; each stage's work is in its folder.

`run_check` never raises for an outside failure: a beta that will not install or a server that
will not start under it is a "fail" with the evidence; a step the watcher itself could not carry
out (the suite would not install, a baseline snapshot could not be taken) is an "error".
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from watcher.boundary import sandbox
from watcher.boundary.network import Reach
from watcher.boundary.process import ServerProcess
from watcher.config import LoadedConfig, WatcherConfig
from watcher.core import progress
from watcher.core.contract_doc import ContractDiff, SnapshotSummary
from watcher.core.errors import Cancelled
from watcher.core.run_report import DeprecationNotice, RunReport, StepResult, load_report
from watcher.sources import versions
from watcher.suites.build import indexes
from watcher.suites.build.env import EnvResult
from watcher.suites.build.install import install
from watcher.suites.judge import contract, deprecations
from watcher.suites.judge.requirements import run_conformance
from watcher.suites.run.server import granted, start_server
from watcher.suites.run.server_env import ServerEnvError
from watcher.suites.settings import Server
from watcher.suites.source.fetch import fetch_source
from watcher.suites.state import ERROR, FAIL, REPORT_FILE, RunState


class _Run(RunState):
    """One check: its state (`RunState`) and the order of its stages. The step methods are the stages' own
    functions, named here so a step run (`_StepRun`) can replace the judge's and tools can drive a run by hand."""

    def __init__(self, loaded: LoadedConfig, server: Server, sdk_version: str, cancel: threading.Event | None):
        super().__init__(loaded, server, sdk_version, cancel, indexes.boundary(loaded.config))

    def install(self, version: str) -> EnvResult:
        return install(self, version)

    def start_server(self, env: EnvResult, log_dir: Path) -> ServerProcess:
        return start_server(self, env, log_dir)

    def take_snapshot(self, server: ServerProcess, env: EnvResult, out_dir: Path) -> SnapshotSummary:
        return contract.take_snapshot(self, server, env, out_dir)

    def steer_contract(self, diff: ContractDiff) -> ContractDiff:
        return contract.steer_contract(self, diff)

    def run_conformance(self, server: ServerProcess) -> None:
        run_conformance(self, server)

    def snapshot_candidate(self, server: ServerProcess, env: EnvResult, out_dir: Path) -> bool:
        return contract.snapshot_candidate(self, server, env, out_dir)

    def scan_warnings(self) -> list[DeprecationNotice]:
        return deprecations.scan_files([self.run_dir / "server.stderr.log", self.run_dir / "server.stdout.log"])

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
            granted(self)
        except ServerEnvError as exc:  # the watcher cannot give the server what it needs: no verdict on the SDK
            self.mark(ERROR, str(exc))
            return
        # 1. source
        if not fetch_source(self):
            return
        # 2. build
        env = self.install(self.sdk_version)
        self.report["install"] = {**env.as_dict(), "prebuilt": self.sdk_version in self.prebuilt}
        if not env.ok:
            self.check_cancel()
            if env.watcher_fault:  # the watcher's own doing (its registry, its tools): nothing known of the server
                self.mark(ERROR, f"{self.sdk_package} {self.sdk_version}: could not install: {env.watcher_fault}")
            elif self.server.language == "other":  # the team's own build failed: no verdict on the SDK
                self.mark(ERROR, f"{self.sdk_package} {self.sdk_version}: {env.error}")
            else:
                self.mark(FAIL, f"{self.sdk_package} {self.sdk_version}: install failed: {env.error}")
            return
        self.check_cancel()
        # 3. run, with the judge's checks against the started server
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
        # 4. judge what the stopped server left: its logs and its contract against the baseline
        self.report["deprecation_warnings"] = self.scan_warnings()
        self.check_cancel()
        if snapshot_ok:
            contract.run_contract(self, candidate_snapshot)

    def finish(self, started: float) -> RunReport:
        self.report["verdict"] = self.verdict
        self.report["seconds"] = round(time.monotonic() - started, 2)
        with contextlib.suppress(OSError):
            (self.run_dir / REPORT_FILE).write_text(json.dumps(self.report, indent=2, default=str), encoding="utf-8")
        prune_runs(self.server_runs, self.config.suites.keep_runs)
        return self.report


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


def _conduct(run: _Run, started: float) -> RunReport:
    try:
        run.run()
    except Cancelled:
        run.mark(ERROR, "cancelled")
    except Exception as exc:  # a bug of ours must not take the worker down; the report keeps the trace
        run.mark(ERROR, f"internal error: {type(exc).__name__}: {exc}")
        run.report["traceback"] = traceback.format_exc(limit=8)
    return run.finish(started)


def run_check(
    loaded: LoadedConfig, server_name: str, sdk_version: str, *, cancel: threading.Event | None = None
) -> RunReport:
    """Run the suites of one configured server against one SDK version and return the report.

    Raises ConfigError only for an unknown server name; everything else ends up in the report.
    """
    started = time.monotonic()
    server = loaded.config.server(server_name)
    return _conduct(_Run(loaded, server, sdk_version, cancel), started)


class _StepRun(_Run):
    """Install and start the server as a check does, then run only `step` against its URL (no contract)."""

    def __init__(
        self, loaded: LoadedConfig, server: Server, sdk_version: str, step: ServerStep, cancel: threading.Event | None
    ):
        super().__init__(loaded, server, sdk_version, cancel)
        self.step = step

    def run_conformance(self, server: ServerProcess) -> None:
        reach = server.reach()
        if reach is None:
            self.report["step"] = {"skipped": "the conformance suite tests servers over HTTP only"}
            return
        target = StepTarget(reach, self.run_dir / "step", self.secret_names, self.cancel, self.sandbox)
        self.report["step"] = self.step(target)

    def snapshot_candidate(self, server: ServerProcess, env: EnvResult, out_dir: Path) -> bool:
        return False


@dataclass(frozen=True)
class StepTarget:
    """What a step run against a started server gets."""

    server: Reach
    """The server, as the watcher reaches it and as a room forwarding its port does."""
    out_dir: Path
    """A folder for the step's output."""
    secret_names: set[str]
    """The watcher's secret variables, kept out of every child."""
    cancel: threading.Event | None
    boundary: sandbox.Sandbox
    """The run's sandbox: the rooms the step's own processes (the conformance suite) run in."""


ServerStep = Callable[[StepTarget], StepResult]
"""A step against a started server -> the step's result."""


def run_step(
    loaded: LoadedConfig,
    server_name: str,
    sdk_version: str,
    step: ServerStep,
    *,
    cancel: threading.Event | None = None,
) -> RunReport:
    """Like run_check, but with `step` in place of the configured sets and the contract (readiness runs).

    The report's `step` holds what the step returned; `verdict` says whether install and start worked.
    """
    started = time.monotonic()
    return _conduct(_StepRun(loaded, loaded.config.server(server_name), sdk_version, step, cancel), started)


def read_report(run_dir: Path) -> RunReport | None:
    """The report.json a run left in its folder (None: there is none), of any version the store reads."""
    path = run_dir / REPORT_FILE
    return load_report(json.loads(path.read_text(encoding="utf-8")), str(path)) if path.exists() else None
