"""A hostile stdio server that writes one endless stdout line: the transport holds at most `STDOUT_LINE_BYTES`
of it, then reads no further, ends the server and reports `StdoutLineTooLong` in the caller's result (the
snapshot's era status, the evaluation's stop reason), never a crash and never a wait for the server to give up.

The server (written by hand, no `mcp` import) answers the handshake like a server, then writes `x` in 1 MiB
blocks with no newline, counting what it got written into a mark file after each block, up to 8 times the cap,
where it would give up (and mark that) and wait. The tests read its marks first (it ran, and where it stopped),
then judge: the watcher read at most what the server got written, which is within the pipe's slack of the cap,
and it never gave up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.boundary.test_stdio_transport import _group_gone
from watcher.boundary.stdio import STDOUT_LINE_BYTES, StdoutLineTooLong
from watcher.contract.snapshot import SnapshotTarget, take_snapshot_sync
from watcher.evaluation import harness
from watcher.evaluation.providers import ToolCall, ToolOutcome, ToolSpec, Turn
from watcher.evaluation.settings import EvaluationBudget
from watcher.evaluation.tasks import Task

BLOCK = 1024 * 1024
GIVE_UP = 8 * STDOUT_LINE_BYTES
SLACK = 2 * BLOCK
"""What a server can get written past what the watcher read: its block in flight and the pipe's buffer."""

ENDLESS = r"""
import json, os, sys, time
marks, give_up, at = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def mark(name, text):  # whole or not at all: the server may be killed at any moment
    with open(os.path.join(marks, name + ".part"), "w") as out:
        out.write(text)
    os.replace(os.path.join(marks, name + ".part"), os.path.join(marks, name))

mark("pid", str(os.getpid()))
block = b"x" * (1024 * 1024)
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] != at:
        result = {"tools": [{"name": "lookup", "inputSchema": {"type": "object"}}]}
        if message["method"] == "initialize":
            info = {"name": "endless", "version": "1.0"}
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": info}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
        continue
    mark("ran", message["method"])
    written = 0
    try:
        sys.stdout.buffer.write(b'{"jsonrpc": "2.0", "id": %d, "result": {"text": "' % message["id"])
        while written < give_up:
            sys.stdout.buffer.write(block)
            sys.stdout.buffer.flush()
            written += len(block)
            mark("written", str(written))
    except BrokenPipeError:
        mark("pipe", "closed by the reader")
    else:
        mark("gave_up", str(written))
    while True:  # the watcher ends it
        time.sleep(0.05)
"""


@pytest.fixture
def marks() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)
        pid = Path(folder) / "pid"
        if pid.exists():  # whatever a failed test left: stopped by the PID it wrote down, never by name
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(int(pid.read_text()), signal.SIGKILL)


def _server(tmp_path: Path, marks: Path, at: str) -> list[str]:
    script = tmp_path / "endless_server.py"
    script.write_text(ENDLESS, encoding="utf-8")
    return [sys.executable, str(script), str(marks), str(GIVE_UP), at]


def _assert_cut_at_the_cap(marks: Path) -> None:
    """The server ran its endless line (its mark), the watcher stopped reading at the cap (what the server got
    written is within the pipe's slack of it: the watcher held no more), the server never gave up, and it is gone."""
    assert (marks / "ran").is_file(), "the endless server never began its line"
    written = int((marks / "written").read_text())
    assert STDOUT_LINE_BYTES <= written <= STDOUT_LINE_BYTES + SLACK, written
    assert not (marks / "gave_up").exists(), "the line was cut only after the server stopped writing"
    assert _group_gone(int((marks / "pid").read_text())), "the server outlived its session"


def test_a_snapshot_of_a_server_writing_an_endless_line_reports_it_past_the_cap(tmp_path: Path, marks: Path) -> None:
    summary = take_snapshot_sync(
        SnapshotTarget(command=_server(tmp_path, marks, "tools/list")),
        tmp_path / "snap",
        era="legacy",
        timeout=600,  # the error comes from the cap; a timeout would say "timed out"
        client_profile_name="none",
        probe_versions=False,
    )
    _assert_cut_at_the_cap(marks)
    status = summary["eras"]["legacy"]["status"]
    assert status.startswith("error: StdoutLineTooLong: the server wrote more than 8 MiB on stdout"), status
    assert "timed out" not in status


class _CallsLookup:
    """A model that calls the server's one tool, then answers."""

    name, model = "scripted", "scripted-1"

    def conversation(self, prompt: str, tools: list[ToolSpec]) -> _Conversation:
        return _Conversation()

    async def aclose(self) -> None:
        pass


class _Conversation:
    def __init__(self) -> None:
        self.turns = [Turn("", [ToolCall("call-1", "lookup", {})], 10, 5), Turn("done", [], 10, 5)]

    async def next_turn(self) -> Turn:
        return self.turns.pop(0)

    def add_tool_outcomes(self, outcomes: list[ToolOutcome]) -> None:
        pass


def test_an_evaluation_whose_server_writes_an_endless_line_stops_with_it_named(tmp_path: Path, marks: Path) -> None:
    command = _server(tmp_path, marks, "tools/call")
    healthy = tmp_path / "healthy"
    healthy.mkdir()
    targets = {
        "baseline": harness.ServerTarget("1.0", command=command),
        "candidate": harness.ServerTarget("1.1", command=[*command[:2], str(healthy), str(GIVE_UP), "never"]),
    }
    task = Task.model_validate({"id": "find", "prompt": "Find a book.", "expect": {"tool": "lookup"}})

    run = asyncio.run(
        harness.run_pairs(
            [task], targets, _CallsLookup(), trials=1, max_steps=3, timeout=600, budget=EvaluationBudget()
        )
    )

    _assert_cut_at_the_cap(marks)
    assert run.stop_kind == "server_gone", run
    assert run.stopped == f"a server was ended: {StdoutLineTooLong()}", run.stopped
    assert run.not_measured == [{"task": "find", "trials": [1], "of": 1, "reason": run.stopped}]
