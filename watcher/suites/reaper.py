"""Process groups the suites started, written down so a restart after a crash can stop them.

Every child that a suite run starts leads its own process group. While it runs, a file named after
its group id sits in the registry folder, holding the leader's start time (from /proc) so that a
recycled PID is never mistaken for ours. A clean stop removes the file; after a kill -9 of the
watcher the files stay, and `reap()` at the next start kills exactly those groups — by group id,
never by name.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from pathlib import Path

log = logging.getLogger(__name__)

_lock = threading.Lock()
_folder: Path | None = None


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
    folder = _folder
    if folder is None:
        return
    started = _start_time(pid)
    if started is not None:
        with contextlib.suppress(OSError):
            (folder / str(pid)).write_text(started)


def untrack(pid: int) -> None:
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
