"""A stdio MCP server started by the watcher and handed to the `mcp` client as its transport.

The server leads its own process group (inside its room when the caller's command comes wrapped by
`Sandbox.wrap`) and carries the reaper's mark. Its stdout is read as JSON-RPC messages, one a line, into
the memory-object streams `mcp.ClientSession` takes; a line that is no message reaches the session as its
parse error (for the snapshot to report, masked; it is never logged here, it may carry a token). A line is
held until its newline up to `STDOUT_LINE_BYTES`: a server that writes more without one has its group killed
at once, the rest of its stdout dropped, and the transport ends with `StdoutLineTooLong` (the caller's result
names it). Its stderr goes to the caller's file, bounded: the first `STDERR_HEAD_BYTES` as they come, of the
rest the last `STDERR_TAIL_BYTES` once the server has ended (its last words are the evidence). The watcher decides
when it ends: when the session is done, stdin is closed, the server gets `EXIT_GRACE_SECONDS` to exit on
its own, then its group gets SIGTERM, then SIGKILL, and whatever left the group is found by its mark and
killed (`reaper.sweep`).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, TextIO

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from watcher.boundary import reaper
from watcher.core.errors import WatcherError

EXIT_GRACE_SECONDS = 0.5
"""How long a server gets to exit by itself once its stdin is closed, before its group gets SIGTERM.
Measured after a session (initialize, tools/list), on this project's 2-core machine: Python `mcp` 2.3
servers exit 0.21-0.39 s after it when the machine is quiet (`mcp` 1.26 FastMCP: 0.17-0.5 s); the Node
server-everything 2026.8.31 0.365 s (a 350 ms timer it sets at initialize), and never under a client that
declares capabilities; its 2025.9.25 release never. Servers that never exit cost the SDK's client its fixed
2 s. Under load a Python server's own exit (interpreter teardown) stretches to 0.5-1.5 s; the SIGTERM then
ends it sooner, and costs nothing: everything it answered has been read."""
TERM_GRACE_SECONDS = 1.0
"""After SIGTERM, how long the group's leader gets before the group is killed."""
FLUSH_SECONDS = 0.5
"""How long the messages the session has handed over get to reach the server's stdin at the end."""
SETTLE_SECONDS = 0.25
"""After the group is gone, how long the processes of its room (another session, ended by bwrap's
`--die-with-parent`) get to die before the sweep kills them as left behind."""
POLL_SECONDS = 0.01
STDOUT_LINE_BYTES = 8 * 1024 * 1024
"""The longest stdout line (one JSON-RPC message) a server may write: 8 MiB. The largest answers in the recorded
real servers' snapshots are tools/list pages of about 170 KB (notion 2.5.2, as stored: indented); a tool's result
in an evaluation carrying an image is a few MiB at most. Past it the line is no message the watcher will read."""
STDERR_HEAD_BYTES = 256 * 1024
"""How much of a server's stderr reaches the caller's file as it is written."""
STDERR_TAIL_BYTES = 16 * 1024
"""Past the head, how much of the end of its stderr is kept (in memory), to be written after it ended."""
CLIENT_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""The watcher's variables every stdio server gets, under the ones the caller gives (the `mcp` client's
safe set, which docs/snapshot.md promises)."""

ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


class StdoutLineTooLong(WatcherError):
    """A stdio server wrote more than `STDOUT_LINE_BYTES` on stdout without a newline: it was read no further
    and ended (its answer, if it was one, is lost: the session ends with this error)."""

    def __init__(self, limit: int = STDOUT_LINE_BYTES) -> None:
        super().__init__(
            f"the server wrote more than {limit // (1024 * 1024)} MiB on stdout without a newline "
            "(no JSON-RPC message is that long): it was read no further and ended"
        )


def client_env(given: Mapping[str, str] | None) -> dict[str, str]:
    """`CLIENT_ENV` from the watcher's environment (never a shell function), `given` over it."""
    base = {name: os.environ[name] for name in CLIENT_ENV if not os.environ.get(name, "()").startswith("()")}
    return base | dict(given or {})


@contextlib.asynccontextmanager
async def stdio_transport(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    cwd: str | None,
    errlog: TextIO | None,
    grace: float = EXIT_GRACE_SECONDS,
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """Start `command` and yield the (read, write) streams of its JSON-RPC messages; when the block ends,
    end the server (see the module's text). Its stderr goes to `errlog`, bounded (None: the watcher's own
    stderr, unbounded: the service's log is the journal's to bound).
    Raises OSError when it cannot start."""
    mark = reaper.new_mark()
    process = await anyio.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None if errlog is None else subprocess.PIPE,
        cwd=cwd,
        env={**client_env(env), reaper.MARK_VARIABLE: mark},
        start_new_session=True,
    )
    # No await until the task group holds the process: a cancellation in between would leak it.
    reaper.track(process.pid)
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done, stderr_done = anyio.Event(), anyio.Event()

    async def read_stdout() -> None:
        assert process.stdout is not None
        try:
            await _deliver_lines(process.stdout, to_session)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass  # the session or our own shutdown closed a stream under the read
        except StdoutLineTooLong:
            # Its answer is lost anyway: the group is killed at once (no grace: it would write on), what is still
            # in the pipe is dropped (by a drain of its own: this task must end now). Raised, the error cancels the
            # session, which must not see its stream end first (it would report a closed connection); the block's
            # end sweeps what is left of the server and hands the error to the caller.
            _signal_group(process.pid, signal.SIGKILL)
            tasks.start_soon(_drain, process.stdout)
            raise
        await to_session.aclose()
        await _drain(process.stdout)

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for item in from_session:
                    line = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(line.encode("utf-8", errors="replace"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server stopped reading (or exited): the session must see the connection end, not wait.
            await to_session.aclose()
        finally:
            writer_done.set()

    async def copy_stderr() -> None:
        try:
            if process.stderr is not None and errlog is not None:
                await _copy_bounded(process.stderr, errlog)
        finally:
            stderr_done.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_stdout)
        tasks.start_soon(write_stdin)
        tasks.start_soon(copy_stderr)
        try:
            yield from_server, to_server
        finally:
            with anyio.CancelScope(shield=True):  # every wait inside is bounded
                from_server.close()  # the reader drains from now on, so a server stuck writing can read
                to_server.close()
                with anyio.move_on_after(FLUSH_SECONDS):
                    await writer_done.wait()
                await end_server(process, mark, grace)
                with anyio.move_on_after(FLUSH_SECONDS):
                    await stderr_done.wait()
                if process.stderr is not None:  # a survivor holding the pipe must not keep the copy waiting
                    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        await process.stderr.aclose()
                for stream in (from_server, to_server, to_session, from_session):
                    await stream.aclose()
            tasks.cancel_scope.cancel()


async def _deliver_lines(
    stdout: ByteReceiveStream, to_session: MemoryObjectSendStream[Any], limit: int = STDOUT_LINE_BYTES
) -> None:
    """Each line of `stdout` to the session as a message, or as the error that it is none; StdoutLineTooLong
    once a line passes `limit` bytes (what is held is the line so far: never more than `limit` and a chunk)."""
    held: list[bytes] = []  # the line so far (a newline byte is never part of a multi-byte UTF-8 character)
    size = 0
    async for chunk in stdout:
        *ends, rest = chunk.split(b"\n")
        for end in ends:
            if size + len(end) > limit:
                raise StdoutLineTooLong(limit)
            line = b"".join([*held, end])
            held, size = [], 0
            # "replace": bytes that are no UTF-8 make a line to report, not a decoding error that ends the session.
            await to_session.send(parse_line(line.decode("utf-8", errors="replace")))
        size += len(rest)
        if size > limit:
            raise StdoutLineTooLong(limit)
        if rest:
            held.append(rest)


async def _copy_bounded(stderr: ByteReceiveStream, errlog: TextIO) -> None:
    """`stderr` into `errlog`: its first `STDERR_HEAD_BYTES` as they come; at its end, its last
    `STDERR_TAIL_BYTES` (whole lines) behind a line saying how many bytes between were left out."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    room, tail, left_out = STDERR_HEAD_BYTES, bytearray(), 0
    try:
        async for chunk in stderr:
            head = chunk[:room]
            room -= len(head)
            if head:
                errlog.write(decoder.decode(head))
                errlog.flush()
            tail += chunk[len(head) :]
            if len(tail) > STDERR_TAIL_BYTES:
                left_out += len(tail) - STDERR_TAIL_BYTES
                del tail[:-STDERR_TAIL_BYTES]
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        pass  # our own shutdown closed the pipe under the read
    finally:
        with contextlib.suppress(OSError, ValueError):  # a file the caller has closed takes nothing more
            if left_out:
                partial, newline, whole = bytes(tail).partition(b"\n")
                if newline:  # the first kept line began in what was left out
                    left_out, tail = left_out + len(partial) + 1, bytearray(whole)
                note = f"[mcp-watcher: {left_out} bytes of the server's stderr left out]\n"
                errlog.write(decoder.decode(b"", final=True) + "\n" + note)
                decoder.reset()
            errlog.write(decoder.decode(bytes(tail), final=True))
            errlog.flush()


def parse_line(line: str) -> SessionMessage | Exception:
    """One line of a server's stdout: its JSON-RPC message, or the validation error saying it is none."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


async def _drain(stdout: ByteReceiveStream) -> None:
    """Read and drop what the server still writes, so that a full pipe never keeps it from exiting."""
    with (
        anyio.CancelScope(shield=True),
        contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError),
    ):
        while True:
            await stdout.receive()


async def end_server(process: Process, mark: str, grace: float) -> None:
    """Close stdin; after `grace`, SIGTERM the group; after `TERM_GRACE_SECONDS`, SIGKILL it; then kill
    and reap whatever carries the mark (processes that left the group, zombies handed to us)."""
    seen = await anyio.to_thread.run_sync(reaper.marked, mark)
    assert process.stdin is not None and process.stdout is not None
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _exited(process, grace):
        _signal_group(process.pid, signal.SIGTERM)
        await _exited(process, TERM_GRACE_SECONDS)
    _signal_group(process.pid, signal.SIGKILL)  # the rest of the group, even when the leader left first
    await _exited(process, TERM_GRACE_SECONDS)
    await anyio.to_thread.run_sync(lambda: _sweep(mark, seen, process.pid))
    reaper.untrack(process.pid)
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()  # a survivor holding the pipe open must not keep the reader waiting


def _sweep(mark: str, seen: list[int], leader: int) -> None:
    """Kill and reap what still carries the mark, once what is dying anyway had its moment."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while reaper.marked(mark) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    reaper.sweep(mark, seen=seen, spare=leader)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _exited(process: Process, seconds: float) -> bool:
    """Whether the leader exited within `seconds` (by its return code: waiting for the process would wait
    for its pipes too, which a child that inherited them holds open)."""
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(POLL_SECONDS)
        return True
    return False
