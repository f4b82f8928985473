"""How a process starts: inside a room (`sandbox.Room`) or on the host for a reason that is named (`Host`).

This module holds the watcher's only calls that start a process (`spawn`, `run_tool`); everything else goes
through a `Launcher`. Outside code (installs, builds, servers under test, the conformance suite) runs in a room.
A command that runs none of it may start on the host, and says why with a `HostReason`: git with hardened
arguments, a query to one of the watcher's own tools, a helper of the boundary itself, or outside code the
operator chose to run without a room (`suites.sandbox: none`). `tests/test_process_starts.py` reads the code
and fails on any start outside this package.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from watcher.boundary.egress import Refusal

log = logging.getLogger(__name__)


class HostReason(enum.Enum):
    """Why a command runs on the host, outside any room: each value covers one kind of command only."""

    GIT = (
        "git with hardened arguments: outside values only after `--`, allow-listed protocols, no prompt; "
        "it reads a repository's objects and runs none of its code"
    )
    TOOL_QUERY = (
        "one of the watcher's own tools asked about itself or its settings (`node --version`, "
        "`npm config get registry`): no package, no script, no project code"
    )
    HELPER = (
        "a helper of the boundary itself: bwrap's probe, slirp4netns (the benchmark's), the relay, the install "
        "room's recorder's probe"
    )
    RESOLVE = (
        "the watcher's own `uv pip compile --only-binary :all:` for the shared wheel cache: it reads wheel "
        "metadata from the index and runs no package code"
    )
    OPTED_OUT = "outside code under `suites.sandbox: none`: the operator chose to run it without a room"


class Launcher:
    """What starts a step's command: `Host` (as it is, for a named reason) or `sandbox.Room` (in bubblewrap)."""

    netns_pid: int | None = None
    """The process whose network namespace the command runs in (a room's first process; None: the host's)."""

    def start(self, command: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
        raise NotImplementedError

    def expose(self, port: int) -> int:
        """The host port at which the watcher reaches the step's `port` (the same one without a room)."""
        return port

    def setup_failed(self, last_line: str) -> bool:
        """True when a failed command's last output line says the room itself could not be made."""
        return False

    def close(self) -> None:
        return None

    def refusals(self) -> list[Refusal]:
        """What the step's egress proxy refused (or recorded under `suites.egress: audit`); a room's only."""
        return []

    def egress_failures(self) -> list[str]:
        """Allowed requests of the step's egress proxy that failed, with their cause (an index down)."""
        return []

    def describe(self) -> str:
        raise NotImplementedError


@dataclass
class Host(Launcher):
    """Starts the command as it is, on the host: only for the reason it names."""

    reason: HostReason

    def start(self, command: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
        log.debug("starting %s on the host: %s", command[0] if command else "?", self.reason.name)
        return spawn(command, **popen)

    def describe(self) -> str:
        return f"host ({self.reason.name.lower().replace('_', ' ')}: {self.reason.value})"


def spawn(command: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
    """Start `command` (a launcher's or a helper's; the room's own argv when it is bwrap)."""
    return subprocess.Popen(list(command), **popen)


@dataclass(frozen=True)
class ToolRun:
    """A short command's outcome: its exit code and its whole output, as text (and stdout's bytes, for a
    caller that reads file content: its decoding is the loader's)."""

    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: bytes = b""


class ToolTimeout(Exception):
    """The command did not end within its time: its whole process group was killed."""


def run_tool(
    command: Sequence[str],
    *,
    why: HostReason,
    env: Mapping[str, str],
    timeout: float,
    cwd: str | os.PathLike[str] | None = None,
) -> ToolRun:
    """Run a short host command whose output is read (git's plumbing, a tool query), in its own process
    group, with `env` only; on timeout the group is killed and ToolTimeout raised. OSError when it cannot start."""
    if why is HostReason.OPTED_OUT:
        raise ValueError("outside code runs through a launcher (run_command), not as a tool")
    log.debug("running %s on the host: %s", command[0] if command else "?", why.name)
    proc = subprocess.Popen(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ToolTimeout(f"{command[0]} took longer than {timeout:.0f} s") from exc
    return ToolRun(proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), out)
