"""The stdio transport of `watcher/boundary/stdio.py` against real child processes: a small JSON-RPC server
written by hand (no `mcp` import, so it starts in milliseconds) that can ignore its closed stdin, ignore
SIGTERM, start a child in its group or a `setsid` daemon out of it, and print noise on stdout. Each server
writes marks into a folder (its pid, what it saw, the signals it got), which the tests read back first,
to show the behaviour they judge really happened."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pytest
from mcp import Client

from watcher.boundary import sandbox
from watcher.boundary.stdio import EXIT_GRACE_SECONDS, STDERR_HEAD_BYTES, STDERR_TAIL_BYTES, stdio_transport
from watcher.contract.snapshot import SnapshotTarget, take_snapshot_sync
from watcher.evaluation import harness

SERVER = r"""
import json, os, signal, subprocess, sys, time
marks, flags = sys.argv[1], set(sys.argv[2:])
FLOOD_LINES = 100_000

def mark(name, text=""):
    if marks == "-":  # in a room nothing of the host is writable: the marks go to stderr
        sys.stderr.write("MARK " + name + " " + text + "\n")
        sys.stderr.flush()
        return
    with open(os.path.join(marks, name), "a") as out:
        out.write(text + "\n")

def on_term(*_):
    mark("term")
    if "--ignore-term" not in flags:
        os._exit(0)

signal.signal(signal.SIGTERM, on_term)
mark("pid", str(os.getpid()))
mark("uid", str(os.getuid()))
if "--child" in flags:  # in the server's group, deaf to SIGTERM
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    mark("child", str(subprocess.Popen([sys.executable, "-c", code, os.path.abspath(__file__)]).pid))
if "--daemon" in flags:  # out of the group (setsid, double fork), still holding the stdout pipe
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            mark("daemon", str(os.getpid()))
            time.sleep(600)
        os._exit(0)
    os.wait()
if "--flood" in flags:  # a chatty server: numbered lines on stderr before it serves
    sys.stderr.write("starting\n")
    for number in range(FLOOD_LINES):
        sys.stderr.write("livre é %06d\n" % number)
sys.stderr.write("books server: listening on stdio\n")
sys.stderr.flush()
if "--noise" in flags:
    print("Starting books server v1.2", flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if "--silent" in flags:
        continue
    if "--noise" in flags:
        print("handling " + message["method"], flush=True)
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    if message["method"] == "initialize":
        reply["result"] = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "books", "version": "1.2"},
        }
    elif message["method"] == "tools/list":
        reply["result"] = {"tools": [{"name": "lookup", "inputSchema": {"type": "object"}}]}
    else:
        reply["error"] = {"code": -32601, "message": message["method"] + " is not served here"}
    print(json.dumps(reply), flush=True)
    if "--die" in flags and message["method"] == "initialize":  # crashes once the session has begun
        mark("died")
        os._exit(3)
mark("eof")
sys.stderr.write("books server: stdin closed\n")
sys.stderr.flush()
if "--stay" in flags:  # a server that does not exit when its stdin closes
    while True:
        time.sleep(0.05)
if "--linger" in flags:  # one that exits on its own, a moment after
    time.sleep(0.2)
"""


@pytest.fixture
def marks() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)
        # Whatever a failed test left: stopped by the PIDs it wrote down, never by name.
        for name in ("pid", "child", "daemon"):
            for pid in _pids(Path(folder), name):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)


def _server(tmp: Path, marks: Path, *flags: str) -> list[str]:
    script = tmp / "books_server.py"
    script.write_text(SERVER, encoding="utf-8")
    return [sys.executable, str(script), str(marks), *flags]


def _pids(marks: Path, name: str) -> list[int]:
    path = marks / name
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def _seen(marks: Path, name: str) -> bool:
    return (marks / name).exists()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def _session(command: list[str], errlog: TextIO | None = None, grace: float = EXIT_GRACE_SECONDS) -> list[str]:
    """A legacy session by the SDK's client over the transport: the tools' names."""

    async def run() -> list[str]:
        transport = stdio_transport(command, env=None, cwd=None, errlog=errlog, grace=grace)
        async with Client(transport, mode="legacy", cache=None, read_timeout_seconds=30) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    return asyncio.run(run())


def test_a_server_that_ignores_its_closed_stdin_is_ended_after_the_grace_with_its_group(
    tmp_path: Path, marks: Path
) -> None:
    command = _server(tmp_path, marks, "--stay", "--ignore-term", "--child", "--daemon")
    assert _session(command) == ["lookup"]
    [pid], [child], [daemon] = _pids(marks, "pid"), _pids(marks, "child"), _pids(marks, "daemon")
    # It ran as it should: it saw its stdin close and stayed, and it was asked to stop before it was killed.
    assert _seen(marks, "eof") and _seen(marks, "term")
    assert _group_gone(pid), "the server's process group outlived the session"
    assert _gone(child), "a child in the server's group (deaf to SIGTERM) outlived the session"
    assert _gone(daemon), "a setsid daemon that left the group outlived the session"


def test_a_server_that_exits_by_itself_within_the_grace_is_not_signalled(tmp_path: Path, marks: Path) -> None:
    assert _session(_server(tmp_path, marks, "--linger"), grace=30.0) == ["lookup"]
    [pid] = _pids(marks, "pid")
    assert _seen(marks, "eof")
    assert not _seen(marks, "term"), "a server that exits on its own got SIGTERM"
    assert _group_gone(pid)


def test_the_grace_is_the_watchers_a_server_still_exiting_when_it_ends_is_signalled(
    tmp_path: Path, marks: Path
) -> None:
    # The server above, which exits 0.2 s after its stdin closes: with no grace it is asked to stop (the
    # SIGTERM may come before it has read the end of its stdin).
    assert _session(_server(tmp_path, marks, "--linger"), grace=0.0) == ["lookup"]
    [pid] = _pids(marks, "pid")
    assert _seen(marks, "term"), "with no grace the lingering server was never signalled"
    assert _group_gone(pid)


def test_a_server_that_dies_mid_session_is_a_reported_error_not_a_wait(tmp_path: Path, marks: Path) -> None:
    summary = take_snapshot_sync(
        SnapshotTarget(command=_server(tmp_path, marks, "--die")),
        tmp_path / "snap",
        era="legacy",
        timeout=600,
        client_profile_name="none",
        probe_versions=False,
    )
    assert _seen(marks, "died"), "the server did not crash after initialize"
    status = summary["eras"]["legacy"]["status"]
    assert status.startswith("error: ") and "Connection closed" in status, status
    assert "books server: listening on stdio" in status  # the stderr tail
    [pid] = _pids(marks, "pid")
    assert _group_gone(pid)


def test_an_evaluation_session_ends_its_stdio_server_with_everything_it_started(tmp_path: Path, marks: Path) -> None:
    command = _server(tmp_path, marks, "--stay", "--ignore-term", "--daemon")

    async def run() -> list[str]:
        async with harness.connect(harness.ServerTarget("1.2", command=command), timeout=30) as client:
            return [spec.name for spec in await harness.list_tools(client)]

    assert asyncio.run(run()) == ["lookup"]
    [pid], [daemon] = _pids(marks, "pid"), _pids(marks, "daemon")
    assert _seen(marks, "eof") and _seen(marks, "term")
    assert _group_gone(pid), "the evaluated server's process group outlived the session"
    assert _gone(daemon), "a setsid daemon of the evaluated server outlived the session"


def test_noise_on_stdout_reaches_the_session_as_errors_and_the_answers_still_work(
    tmp_path: Path, marks: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    command = _server(tmp_path, marks, "--noise")

    async def run() -> tuple[list[str], list[str]]:
        noise: list[str] = []

        async def on_message(message: object) -> None:
            if isinstance(message, Exception):
                noise.append(str(message))

        transport = stdio_transport(command, env=None, cwd=None, errlog=None)
        async with Client(transport, mode="legacy", cache=None, message_handler=on_message) as client:
            return [tool.name for tool in (await client.list_tools()).tools], noise

    tools, noise = asyncio.run(run())
    assert tools == ["lookup"]
    assert any("Starting books server v1.2" in text for text in noise), noise
    assert any("handling tools/list" in text for text in noise), noise
    # Skipped by the session, never logged: a line of noise may carry the server's token.
    assert "Starting books server" not in caplog.text and "handling tools/list" not in caplog.text


def test_the_servers_stderr_goes_to_the_callers_file_and_its_environment_is_the_given_one(
    tmp_path: Path, marks: Path
) -> None:
    probe = tmp_path / "env_server.py"
    probe.write_text(
        "import os, sys\n"
        "sys.stderr.write('BOOKS_SCOPE=' + os.environ.get('BOOKS_SCOPE', '') + '\\n')\n"
        "sys.stderr.write('HAS_MARK=' + str('MCP_WATCHER_MARK' in os.environ) + '\\n')\n"
        f"exec(open({str(tmp_path / 'books_server.py')!r}).read())\n",
        encoding="utf-8",
    )
    _server(tmp_path, marks)  # writes books_server.py

    async def run() -> None:
        transport = stdio_transport(
            [sys.executable, str(probe), str(marks)], env={"BOOKS_SCOPE": "catalog:read"}, cwd=None, errlog=errlog
        )
        async with Client(transport, mode="legacy", cache=None):
            pass

    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog:
        asyncio.run(run())
        errlog.seek(0)
        lines = errlog.read().splitlines()
    assert "BOOKS_SCOPE=catalog:read" in lines and "HAS_MARK=True" in lines
    assert "books server: listening on stdio" in lines


def test_a_chatty_servers_stderr_is_kept_to_its_head_and_its_last_lines(tmp_path: Path, marks: Path) -> None:
    # 9 bytes, then lines of 16: the head's end falls between the two bytes of an "é".
    flood = b"starting\n" + b"".join(f"livre \u00e9 {number:06d}\n".encode() for number in range(100_000))
    assert flood[STDERR_HEAD_BYTES - 7 : STDERR_HEAD_BYTES + 1] == "livre \u00e9".encode()
    last_words = b"books server: listening on stdio\nbooks server: stdin closed\n"
    assert len(flood) > 4 * (STDERR_HEAD_BYTES + STDERR_TAIL_BYTES)  # what the server writes, in bytes
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog:
        assert _session(_server(tmp_path, marks, "--flood"), errlog) == ["lookup"]
        errlog.seek(0)
        kept = errlog.read().encode()
    assert _seen(marks, "eof"), "the server never got to serve"
    head, note, tail = re.split(rb"\n?\[mcp-watcher: (\d+) bytes of the server's stderr left out\]\n", kept)
    # The "é" cut in two is one replacement character, not a decoding error.
    assert head == flood[: STDERR_HEAD_BYTES - 1] + "\ufffd".encode(), head[-20:]
    assert (flood + last_words).endswith(tail) and tail.endswith(last_words) and len(tail) <= STDERR_TAIL_BYTES
    assert tail.startswith(b"livre \xc3\xa9 "), "the kept tail does not begin with a whole line"
    assert STDERR_HEAD_BYTES + int(note) + len(tail) == len(flood + last_words), "bytes lost or counted twice"


def test_a_hung_server_is_a_timed_out_result_and_is_ended(tmp_path: Path, marks: Path) -> None:
    command = _server(tmp_path, marks, "--silent", "--stay", "--ignore-term", "--child")
    summary = take_snapshot_sync(
        SnapshotTarget(command=command), tmp_path / "snap", era="legacy", timeout=1, client_profile_name="none"
    )
    status = summary["eras"]["legacy"]["status"]
    assert status.startswith("error: timed out after 1 s"), status
    assert "books server: listening on stdio" in status  # the stderr tail, as before
    [pid], [child] = _pids(marks, "pid"), _pids(marks, "child")
    assert _seen(marks, "term"), "the hung server was never asked to stop"
    assert _group_gone(pid) and _gone(child)


def test_a_snapshot_through_noise_is_complete(tmp_path: Path, marks: Path) -> None:
    command = _server(tmp_path, marks, "--noise")
    summary = take_snapshot_sync(
        SnapshotTarget(command=command),
        tmp_path / "snap",
        era="legacy",
        timeout=30,
        client_profile_name="none",
        probe_versions=False,
    )
    assert summary["eras"]["legacy"]["status"] == "ok"
    assert summary["eras"]["legacy"]["counts"]["tools"] == 1


def test_a_server_in_its_room_is_ended_with_everything_in_the_room(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    boundary = sandbox.choose("bubblewrap")
    if not boundary.active:
        pytest.skip(f"the run boundary cannot be had here: {boundary.reason}")
    system_python = "/usr/bin/python3"
    if not Path(system_python).exists():
        pytest.skip("no system Python at /usr/bin/python3")
    project = tmp_path / "project"  # bound alone: the room's user cannot enter tmp_path itself (0700)
    project.mkdir(mode=0o755)
    _server(project, project)  # writes books_server.py
    inner = [system_python, str(project / "books_server.py"), "-", "--stay", "--ignore-term", "--child"]
    command = boundary.wrap(inner, cwd=project, readable=[project])
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog:
        assert _session(command, errlog) == ["lookup"]
        errlog.seek(0)
        marks = dict(
            line.split()[1:3]
            for line in errlog.read().splitlines()
            if line.startswith("MARK ") and len(line.split()) > 2
        )
    # It ran in the room: its own PID namespace, and not as root when the watcher is; its child started.
    assert int(marks["pid"]) < 10 and "child" in marks, marks
    assert os.geteuid() != 0 or marks["uid"] == str(sandbox.SANDBOX_UID), marks
    assert not _room_processes(project), "a process of the room outlived the session"
    assert "left running" not in caplog.text, "ending a room was reported as processes left behind"


def _room_processes(project: Path) -> list[int]:
    """Live processes whose command line names this test's server script (the server and its child)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if str(project / "books_server.py").encode() in argv and b"bwrap" not in argv.split(b"\0")[0]:
                found.append(int(entry))
    return found


def test_a_command_that_cannot_start_is_an_error_of_the_caller() -> None:
    async def run() -> None:
        async with stdio_transport(["/nonexistent/books-server"], env=None, cwd=None, errlog=None):
            pass

    with pytest.raises(FileNotFoundError):
        asyncio.run(run())
