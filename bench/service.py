"""The real service as a child process, for the end-to-end benchmarks: start it, wait for it, stop it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from watcher.core.clock import START_VARIABLE

ROOT = Path(__file__).resolve().parents[1]


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.1, message: str = "it") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout} s waiting for {message}")


class Service:
    """`mcp-watcher --config CONFIG run --port PORT` in its own process group, logging into `log_path`."""

    def __init__(self, config: Path, env: dict[str, str], log_path: Path, clock_start: str) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        child_env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
        child_env.update(env)
        child_env[START_VARIABLE] = clock_start
        child_env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))
        self.log_path = log_path
        with log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "watcher.cli", "--config", str(config), "run", "--port", str(self.port)],
                cwd=config.parent,
                env=child_env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stopped with everything it started
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_http(self, timeout: float) -> None:
        def healthy() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"the service exited with {self.process.returncode}:\n{self.log()[-3000:]}")
            try:
                return httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(healthy, timeout, message="/healthz")

    def wait_for_log(self, text: str, timeout: float) -> None:
        wait_until(lambda: text in self.log(), timeout, message=f"the log line {text!r}")

    def stop(self) -> None:
        """SIGTERM to its process group; SIGKILL after 15 s."""
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
