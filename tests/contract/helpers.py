"""Helpers for the contract tests: real server subprocesses, hand-written snapshot folders, the CLI."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from watcher.contract.commands import register
from watcher.contract.snapshot import SnapshotTarget

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "examples" / "library"
VARIANTS = ("v1", "v2", "v3-breaking", "v3")


def child_env() -> dict[str, str]:
    """A minimal environment for server children: no secrets, the example importable."""
    return {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join([str(LIBRARY), str(ROOT)])}


def library_command(variant: str) -> list[str]:
    return [sys.executable, "-m", "library_server", "--variant", variant]


def extra_server_command(name: str) -> list[str]:
    return [sys.executable, "-m", "tests.contract.fixtures.servers", name]


def stdio_target(command: list[str]) -> SnapshotTarget:
    return SnapshotTarget(command=command, env=child_env(), cwd=str(ROOT))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def http_server(command: list[str], timeout: float = 30.0) -> Iterator[str]:
    """Start `command --port N` in its own process group; yield its /mcp URL; stop the group by its id."""
    port = free_port()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [*command, "--port", str(port)],
            cwd=ROOT,
            env=child_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"server exited with {proc.returncode}: {log.read().decode()[-2000:]}")
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server did not listen on port {port} within {timeout} s")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def run_cli(argv: list[str]) -> int:
    """Our own parser with the contract subcommands registered, as the lead's cli.py will do."""
    parser = argparse.ArgumentParser(prog="mcp-watcher")
    register(parser.add_subparsers(dest="command_name", required=True))
    args = parser.parse_args(argv)
    return args.handler(args)


def tool(name: str, input_schema: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    schema = input_schema if input_schema is not None else {"type": "object", "properties": {}}
    return {"name": name, "description": f"The {name} tool.", "inputSchema": schema, **fields}


def obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if required is not None:
        schema["required"] = required
    return schema


def server_record(era: str = "modern", **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "era": era,
        "status": "ok",
        "protocolVersion": "2026-07-28" if era == "modern" else "2025-11-25",
        "supportedVersions": ["2026-07-28"] if era == "modern" else ["2025-11-25"],
        "capabilities": {"tools": {"listChanged": True}},
        "extensions": {},
        "instructions": "Use the tools.",
        "serverInfo": {"name": "demo", "version": "1.0"},
    }
    return {**base, **fields}


def write_snapshot(
    directory: Path,
    tools: list[dict[str, Any]] | None = None,
    prompts: list[dict[str, Any]] | None = None,
    resources: list[dict[str, Any]] | None = None,
    templates: list[dict[str, Any]] | None = None,
    server: dict[str, Any] | None = None,
    errors: dict[str, Any] | None = None,
) -> Path:
    """A single-era snapshot folder written by hand, as a test fixture."""
    directory.mkdir(parents=True, exist_ok=True)
    files = {
        "tools.json": tools or [],
        "prompts.json": prompts or [],
        "resources.json": resources or [],
        "resource-templates.json": templates or [],
        "server.json": server if server is not None else server_record(),
        "errors.json": errors or {},
    }
    for name, value in files.items():
        (directory / name).write_text(json.dumps(value, indent=2), encoding="utf-8")
    return directory
