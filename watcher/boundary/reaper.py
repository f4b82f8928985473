"""Process groups the suites started, written down so a restart after a crash can stop them.

Every child that a suite run starts leads its own process group. While it runs, a file named after
its group id sits in the registry folder, holding the leader's start time (from /proc) so that a
recycled PID is never mistaken for ours. A clean stop removes the file; after a kill -9 of the
watcher the files stay, and `reap()` at the next start kills exactly those groups — by group id,
never by name.

Without a sandbox room (whose PID namespace ends every process with it), a step's children can still
leave its group (`setsid` and a double fork). So the watcher is a child subreaper (`prctl
PR_SET_CHILD_SUBREAPER`): such orphans become its children instead of init's. Each step's children carry
a random mark in their environment (`MCP_WATCHER_MARK`); when the step ends, `sweep` kills every process
that still carries it, and reaps it.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

_lock = threading.Lock()
_folder: Path | None = None
_subreaper: bool | None = None
_live: set[int] = set()
"""The process groups started and not yet seen gone, in this process (also without a registry folder)."""

MARK_VARIABLE = "MCP_WATCHER_MARK"
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process the child subreaper of everything it starts (Linux); True when it is."""
    global _subreaper
    with _lock:
        if _subreaper is None:
            _subreaper = False
            if sys.platform.startswith("linux"):
                with contextlib.suppress(OSError, AttributeError):
                    libc = ctypes.CDLL(None, use_errno=True)
                    _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        return _subreaper


def new_mark() -> str:
    """A mark for one step's children (and make sure their orphans come back to us)."""
    become_subreaper()
    return secrets.token_hex(8)


def marked(mark: str) -> list[int]:
    """The processes whose environment carries `mark` (those we may read: ours, or any as root)."""
    needle = f"{MARK_VARIABLE}={mark}".encode()
    found = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry))
    return found


def sweep(mark: str, *, seen: Iterable[int] = (), spare: int | None = None) -> list[int]:
    """Kill every process a finished step left behind (by its mark, by PID), and reap those handed to us.

    `seen`: the step's processes listed before its group was stopped (a process that has died since is a
    zombie whose environment can no longer be read; if it was handed to us, it is reaped here too).
    `spare`: the step's leader, which its Popen reaps."""
    if not Path("/proc/self/environ").exists():
        return []
    left = marked(mark)
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    pending = {pid for pid in {*left, *seen} if pid != spare}
    deadline = time.monotonic() + 2.0
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)  # an orphan handed to us as subreaper
            except ChildProcessError:  # not ours to reap: gone, or some other parent's
                done = pid if _dead(pid) else 0
            if done:
                pending.discard(pid)
        if pending:
            time.sleep(0.02)
    reap_rooms()
    if left:
        log.warning("killed %d process(es) a suite step left running: %s", len(left), left)
    return left


def reap_rooms() -> list[int]:
    """Reap the dead first processes of sandbox rooms handed to us (bwrap's parent exits without reaping
    its child, which then comes to us as subreaper). Such a process was PID 1 of a PID namespace, which
    no child we start directly ever is, so reaping it cannot take an exit status someone else waits for."""
    me, reaped = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        nspid = fields.get("NSpid", "").split()
        if fields.get("PPid", "").strip() != str(me) or not fields.get("State", "").strip().startswith("Z"):
            continue
        if len(nspid) > 1 and nspid[-1] == "1":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(int(entry), os.WNOHANG)
                reaped.append(int(entry))
    return reaped


def _dead(pid: int) -> bool:
    """True when `pid` is gone or a zombie (some other parent will reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def configure(folder: Path | None) -> None:
    """Where the registry lives (None: nothing is recorded, e.g. a one-off `check`)."""
    global _folder
    with _lock:
        _folder = folder
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22 (starttime) counts from after the command name, which may contain spaces.
    return stat.rsplit(")", 1)[1].split()[19]


def track(pid: int) -> None:
    _live.add(pid)
    folder = _folder
    if folder is None:
        return
    started = _start_time(pid)
    if started is not None:
        with contextlib.suppress(OSError):
            (folder / str(pid)).write_text(started)


def untrack(pid: int) -> None:
    _live.discard(pid)
    folder = _folder
    if folder is not None:
        with contextlib.suppress(OSError):
            (folder / str(pid)).unlink()


def reap() -> list[int]:
    """Kill the groups left by a watcher that died; returns their ids."""
    folder = _folder
    if folder is None or not folder.is_dir():
        return []
    killed = []
    for entry in folder.iterdir():
        if not entry.name.isdigit():
            continue
        pgid = int(entry.name)
        recorded = entry.read_text().strip()
        if _start_time(pgid) == recorded:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
                killed.append(pgid)
        entry.unlink(missing_ok=True)
    if killed:
        log.warning("stopped %d process group(s) left by a previous run: %s", len(killed), killed)
    return killed


def stop_all(grace: float = 1.0) -> list[int]:
    """Stop every process group this process started that is still running (SIGTERM, SIGKILL after `grace`
    seconds): what an interrupted command does when its stages did not stop their children in time."""
    groups = sorted(_live)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pgid in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, sig)
        deadline = time.monotonic() + grace
        while sig == signal.SIGTERM and time.monotonic() < deadline and any(_group_alive(g) for g in groups):
            time.sleep(0.05)
    for pgid in groups:
        untrack(pgid)
    if groups:
        log.warning("stopped %d process group(s) still running at the interrupt: %s", len(groups), groups)
    return groups


def _group_alive(pgid: int) -> bool:
    """True while the group's leader runs (a zombie leader whose group is gone counts as stopped)."""
    return not _dead(pgid)
