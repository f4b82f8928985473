"""Running the real service as a child process in tests: start, wait, stop by process group."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import httpx
import pytest

from watcher.core.clock import START_VARIABLE

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServiceProcess:
    process: subprocess.Popen
    port: int
    log_path: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.base + path, timeout=5)

    def wait_http(self, timeout: float = 120) -> None:
        # 120: on a loaded machine (load 14, three clock runs side by side) a start took over 30 s; a service
        # that exits is seen at once, one that hangs still fails here.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"service exited with {self.process.returncode}:\n{self.log()}")
            try:
                if self.get("/healthz").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"service did not answer /healthz in {timeout} s:\n{self.log()}")

    def wait_for_log(self, text: str, timeout: float = 30) -> None:
        """Wait until the service has logged `text`."""
        wait_until(lambda: text in self.log(), timeout=timeout, message=f"the log line {text!r}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def terminate(self, timeout: float = 30) -> int:
        """SIGTERM, as an orchestrator would; returns the exit code."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout)

    def kill_hard(self) -> None:
        """kill -9 the service's whole process group (as a crash or OOM kill would)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self.terminate(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill_hard()


PRODUCT_VENV = "MCP_WATCHER_TEST_PRODUCT"
"""A venv with the product installed (scripts/test-installed): the service tests run it, not the checkout."""


def product_python() -> tuple[str, str | None]:
    """The interpreter that runs the service under test, and the checkout to import it from (None: the
    installed product in PRODUCT_VENV, e.g. on the oldest supported Python)."""
    venv = os.environ.get(PRODUCT_VENV)
    if venv:
        return str(Path(venv) / "bin" / "python"), None
    return sys.executable, str(ROOT)


SERVICE_CLOCK_START = "2026-12-03T12:00:00Z"
"""Where a started service's clock begins unless a test says otherwise: a Thursday 75 h after the default
digest time (Monday 09:00 UTC), beyond its 72 h catch-up grace, so no digest is due in a test that is not
about the digest — whatever day the suite happens to run on."""


def start_service(
    config: Path,
    env: dict[str, str],
    log_path: Path,
    port: int | None = None,
    clock_start: str = SERVICE_CLOCK_START,
) -> ServiceProcess:
    port = port or free_port()
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    child_env[START_VARIABLE] = clock_start
    child_env.update(env)
    python, checkout = product_python()
    # Keep entries already there (the clock-independence check puts its wall-clock shim first).
    child_env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), checkout]))
    log_file = log_path.open("ab")
    process = subprocess.Popen(
        [python, "-m", "watcher.cli", "--config", str(config), "run", "--port", str(port)],
        cwd=config.parent,
        env=child_env,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the test can kill it and everything it started
    )
    log_file.close()
    return ServiceProcess(process, port, log_path)


_IGNORE_SIGINT_THEN_EXEC = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])"
)


def ignoring_sigint(argv: list[str]) -> list[str]:
    """`argv` (its first item an absolute path) started with SIGINT ignored, which survives the exec: how a
    non-interactive parent starts it (`cmd &` in a script, `nohup`), and Python then installs no
    KeyboardInterrupt handler of its own."""
    return [sys.executable, "-c", _IGNORE_SIGINT_THEN_EXEC, *argv]


def run_cli(config: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """A `mcp-watcher` command in a child process on the service's clock (beside a running service, it reads
    the same state), without Slack's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    env[START_VARIABLE] = SERVICE_CLOCK_START
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))
    return subprocess.run(
        [sys.executable, "-m", "watcher.cli", "--config", str(config), *args],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def wait_until(predicate, timeout: float = 30, interval: float = 0.1, message: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {message}")


def required_under_ci() -> bool:
    """True under `.ci/run` (CI=true, or `scripts/test --ci`): the sandbox and the browser must be there."""
    return os.environ.get("CI") == "true" or os.environ.get("MCP_WATCHER_CI") == "1"


def skip_unless_ci(reason: str) -> NoReturn:
    """Skip a test whose machine lacks what it drives (bubblewrap, chromium), saying why; under CI that is a
    failure instead, so a CI run never passes with the sandbox tests quietly skipped."""
    if required_under_ci():
        pytest.fail(f"{reason}: required under CI (scripts/test installs it when it runs as root)")
    pytest.skip(reason)
