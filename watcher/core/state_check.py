"""Clear errors for a state file that cannot be used: what is wrong with which file, and what to do.

A zero-byte file is refused rather than taken for a fresh start: a fresh start takes a new baseline and
sends this week's digest again, which only the operator may decide (by deleting the file).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from watcher.core.errors import StateError as StateError

_RESTORE = "restore it from a backup, or move it aside to start fresh (a new baseline; this week's digest again)"


def check_state_file(path: Path) -> None:
    """Refuse what SQLite would misread or silently replace, before it is opened."""
    if path.is_dir():
        raise StateError(f"{path}: is a directory, not the state database; move it aside or set `state:` to a file")
    if path.exists() and path.stat().st_size == 0:
        wal = path.with_name(path.name + "-wal")
        if not (wal.exists() and wal.stat().st_size > 0):
            raise StateError(
                f"{path}: the state database is empty (0 bytes), not a fresh state; "
                f"{_RESTORE}. To start fresh on purpose, delete the file."
            )
    if path.exists() and not os.access(path, os.R_OK):
        raise StateError(f"{path}: the state database cannot be read (permissions); fix its owner or mode")
    parent = path.parent
    if parent.exists() and not parent.is_dir():
        raise StateError(f"{path}: its folder {parent} is a file; set `state:` to a path inside a folder")


def describe(path: Path, exc: BaseException) -> str:
    text = str(exc)
    if "readonly" in text or "read-only" in text:
        return (
            f"{path}: the state database cannot be written ({text}); "
            "fix the permissions of the file and its folder (SQLite also writes -wal and -shm files beside it)"
        )
    if isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text):
        return f"{path}: is not a usable state database ({text}); {_RESTORE}"
    if isinstance(exc, OSError):
        return f"{path}: cannot open the state database: {exc.strerror or exc}"
    return f"{path}: cannot open the state database: {text}; {_RESTORE}"
