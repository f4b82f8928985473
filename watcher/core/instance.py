"""One running service per state database: an flock on `<state>.lock`, which holds the holder's PID.

The kernel drops an flock when its holder exits, however it exits, so a crash cannot leave a stale lock;
the file opened here is not inherited by the processes the service starts (Python opens files
non-inheritable), so a server under test that outlives a killed watcher does not keep it either.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from watcher.core.errors import StateError


def lock_path(state: Path) -> Path:
    return state.with_name(state.name + ".lock")


@contextlib.contextmanager
def single_instance(state: Path) -> Iterator[None]:
    """Hold the state's lock while the block runs; StateError naming the holder's PID when another has it."""
    path = lock_path(state)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StateError(f"{path}: cannot create the state's lock file: {exc.strerror or exc}") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            raise StateError(
                f"{state}: another mcp-watcher run (PID {holder}) is using this state; stop it first, "
                "or give this one its own `state:` (two services on one state would send every notice twice)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing releases the flock
