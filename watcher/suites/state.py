"""One suite run's state, shared by the conductor (`runner`) and the stages it calls: the report being written,
the verdict so far, where the server's files are, the cancel flag. It sits below every stage and imports none,
so a stage can take the run it works on without importing the conductor."""

from __future__ import annotations

import secrets
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from watcher.config import LoadedConfig, WatcherConfig, secret_env_names
from watcher.core import vault
from watcher.core.errors import Cancelled
from watcher.core.run_report import REPORT_VERSION, RunReport
from watcher.core.timefmt import iso, utcnow
from watcher.suites.settings import Server

if TYPE_CHECKING:
    from watcher.boundary.sandbox import Sandbox

PASS, FAIL, ERROR = "pass", "fail", "error"
_RANK = {PASS: 0, FAIL: 1, ERROR: 2}
REPORT_FILE = "report.json"


def sdk_package_of(config: WatcherConfig, server: Server) -> str:
    if server.sdk_package:
        return server.sdk_package
    return config.sdk(server.sdk).package


def safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def new_run_id(sdk_version: str) -> str:
    stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{safe_name(sdk_version)}-{secrets.token_hex(2)}"


def worst(*verdicts: str) -> str:
    return max(verdicts, key=lambda v: _RANK[v])


class RunState:
    """The state of one check while it runs; `report` is what gets stored."""

    def __init__(
        self,
        loaded: LoadedConfig,
        server: Server,
        sdk_version: str,
        cancel: threading.Event | None,
        boundary: Sandbox,
    ):
        self.loaded = loaded
        self.config = loaded.config
        self.server = server
        self.sdk_version = sdk_version
        self.cancel = cancel
        self.secret_names = secret_env_names(self.config)
        self.sdk_package = sdk_package_of(self.config, server)
        self.envs_dir = loaded.resolve(self.config.suites.envs_dir)
        self.run_id = new_run_id(sdk_version)
        self.server_runs = loaded.resolve(self.config.suites.runs_dir) / safe_name(server.name)
        self.run_dir = self.server_runs / self.run_id
        # A git source replaces these once fetched (source.checkout.fetch_source); a path server has them now.
        self.repo_root: Path | None = None
        self.project = loaded.resolve(server.path) if server.path else self.run_dir / "source"
        self.granted_values: dict[str, str] | None = None
        """The server's env_from / env_files values, read once per run (run.server.granted)."""
        self.prebuilt: set[str] = set()
        """SDK versions whose environment a pre-build made (or failed to make) before this run asked."""
        self.sandbox = boundary
        self.verdict = PASS
        self.report: RunReport = {
            "report_version": REPORT_VERSION,
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
            "sandbox": boundary.to_json(),
            "protection": (vault.current() or vault.Protection(False, "not sealed (not started by the CLI)")).to_json(),
        }

    def mark(self, verdict: str, reason: str) -> None:
        self.verdict = worst(self.verdict, verdict)
        self.report["reasons"].append({"verdict": verdict, "reason": reason})

    def repo_path(self, configured: str) -> Path:
        """A configured file of the server's: inside the checked-out repository for a git source."""
        if self.repo_root is not None and not Path(configured).is_absolute():
            return self.repo_root / configured
        return self.loaded.resolve(configured)

    def repo_root_of(self, configured: str) -> Path | None:
        """The root `repo_path(configured)` is read under without following a link: the checked-out
        repository for a git source's relative path; None for the operator's own files."""
        return self.repo_root if self.repo_root is not None and not Path(configured).is_absolute() else None

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()
