"""The watcher's own secrets, read once at start and taken out of its environment; its process made non-dumpable.

A server under test runs as the same user as the watcher. Without this, it could read the Slack token
from `/proc/<watcher pid>/environ` or the watcher's memory. `sealed()` therefore, for the length of one
command: (1) moves the watcher's secret variables (Slack, webhook, page, provider, GitHub tokens) from
`os.environ` into a holder in memory that `environ()` serves to the code that reads them; (2) overwrites
their text in the process's initial environment block, which `/proc/<pid>/environ` shows whatever
`os.environ` says; (3) marks the process non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`), so processes of the
same user (without CAP_SYS_PTRACE) can neither open its `/proc/<pid>/environ` and `mem` nor trace it.

Variables granted to a server (`servers[].env_from`) are not the watcher's: they stay in the environment.

Before the configuration is even read, the console script's first lines (`watcher.entry`) call
`seal_early()`: non-dumpable at once, and every variable whose name or value looks like a secret (the one
policy, `watcher.core.secret_policy`) held and overwritten in the environment block, so the window in which
`/proc/<pid>/environ` shows a token is the interpreter's own start-up, not the CLI's imports. `seal()` then
settles it by the configuration: the watcher's own secrets stay held, every other early-held variable goes
back to `os.environ`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections import ChainMap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from watcher.core.secret_policy import is_secret

if TYPE_CHECKING:  # the run report's model needs pydantic; this module is loaded without it too
    from watcher.core.run_report import ProtectionPart

_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4
# /proc/<pid>/stat fields 50 and 51 (1-based): where the initial environment block starts and ends.
_ENV_START_FIELD, _ENV_END_FIELD = 50, 51

_held: dict[str, str] = {}
_early: set[str] = set()
"""Names `seal_early` held before the configuration said which are the watcher's own."""


@dataclass(frozen=True)
class Protection:
    """What protects the watcher's secrets in this process (shown by `status` and the run report)."""

    non_dumpable: bool
    dumpable_note: str
    removed: tuple[str, ...] = ()
    """Secret variables taken out of the environment (names only)."""
    environ_block_scrubbed: bool = False
    """Their text was also overwritten where `/proc/<pid>/environ` reads it."""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> ProtectionPart:
        return {
            "non_dumpable": self.non_dumpable,
            "dumpable_note": self.dumpable_note,
            "secrets_removed_from_environment": list(self.removed),
            "environ_block_scrubbed": self.environ_block_scrubbed,
            "notes": list(self.notes),
        }

    def describe(self) -> str:
        dump = "non-dumpable" if self.non_dumpable else f"dumpable ({self.dumpable_note})"
        names = ", ".join(self.removed) or "none set"
        return f"watcher process {dump}; secret variables held in memory only: {names}"


_current: Protection | None = None


def environ() -> Mapping[str, str]:
    """The watcher's environment as its own code sees it: the held secrets, then `os.environ`."""
    return ChainMap(_held, os.environ)


def read_token(env_name: str | None, file: Path | None, environ: Mapping[str, str]) -> str | None:
    """A token from its variable (stripped, when not empty), else from its file (stripped); None when neither
    gives one. The one reader of a `*_env` / `*_file` pair; an unreadable file raises its OSError, for the
    caller to name the setting."""
    if env_name and environ.get(env_name, "").strip():
        return environ[env_name].strip()
    if file is not None:
        return file.read_text(encoding="utf-8").strip() or None
    return None


def held_values() -> tuple[str, ...]:
    """The values of the held secrets (for masking log lines)."""
    return tuple(v for v in _held.values() if v)


def current() -> Protection | None:
    """The protection in force in this process (None outside `sealed`)."""
    return _current


def make_non_dumpable() -> tuple[bool, str]:
    """Mark this process non-dumpable; (done, why not) — a no-op that says so off Linux."""
    if not sys.platform.startswith("linux"):
        return False, f"prctl(PR_SET_DUMPABLE) is Linux only (this is {sys.platform})"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            return False, f"prctl(PR_SET_DUMPABLE) failed: {os.strerror(ctypes.get_errno())}"
        return libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0) == 0, "prctl(PR_SET_DUMPABLE, 0)"
    except (OSError, AttributeError) as exc:
        return False, f"prctl is not reachable: {exc}"


def scrub_initial_environment(names: Iterable[str]) -> bool:
    """Overwrite `NAME=value` of each name in the block `/proc/self/environ` shows; True when it could."""
    wanted = {name.encode() for name in names}
    if not wanted:
        return True
    try:
        stat = open("/proc/self/stat", encoding="ascii").read()  # noqa: SIM115 (one read)
        fields = stat.rsplit(")", 1)[1].split()
        # fields[0] is field 3 of the man page's numbering.
        start, end = int(fields[_ENV_START_FIELD - 3]), int(fields[_ENV_END_FIELD - 3])
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            block = mem.read(end - start)
            offset = 0
            for entry in block.split(b"\0"):
                if entry.split(b"=", 1)[0] in wanted:
                    mem.seek(start + offset)
                    mem.write(b"\0" * len(entry))
                offset += len(entry) + 1
    except (OSError, ValueError, IndexError):
        return False
    return True


def seal_early() -> tuple[str, ...]:
    """The entry point's first call: non-dumpable, then every secret-looking variable held and scrubbed.

    Standard library only, no configuration: it runs before any heavy import (the policy module is plain
    string checks). Returns the names held."""
    make_non_dumpable()
    names = sorted(name for name, value in os.environ.items() if is_secret(name, value) and name not in _held)
    for name in names:
        _held[name] = os.environ.pop(name)
    _early.update(names)
    if sys.platform.startswith("linux"):
        scrub_initial_environment(names)
    return tuple(names)


def seal(names: Iterable[str], granted: Iterable[str] = ()) -> Protection:
    """Move the named variables out of the environment into the holder; make the process non-dumpable.

    `granted` (the servers' env_from variables) stay in `os.environ`, where their server's run reads them,
    but their text too is overwritten in the block `/proc/<pid>/environ` shows: no other server finds them.
    Variables `seal_early` held that are not among `names` go back to `os.environ`."""
    global _current
    wanted = set(names)
    for name in sorted(_early - wanted):
        os.environ.setdefault(name, _held.pop(name))
    _early.clear()
    removed = []
    for name in sorted(wanted):
        value = os.environ.pop(name, None)
        if value is not None:
            _held[name] = value
        if name in _held:
            removed.append(name)
    linux = sys.platform.startswith("linux")
    scrubbed = scrub_initial_environment([*removed, *granted]) if linux else False
    non_dumpable, note = make_non_dumpable()
    notes: list[str] = []
    if non_dumpable and os.geteuid() == 0:
        notes.append("running as root: other root processes keep CAP_SYS_PTRACE; the suite sandbox is what hides it")
    _current = Protection(non_dumpable, note, tuple(removed), scrubbed, tuple(notes))
    return _current


def unseal() -> None:
    """Give the held variables back to `os.environ` (for in-process callers such as tests; a CLI run exits)."""
    global _current
    for name, value in _held.items():
        os.environ.setdefault(name, value)
    _held.clear()
    _early.clear()
    _current = None


@contextlib.contextmanager
def sealed(names: Iterable[str], granted: Iterable[str] = ()) -> Iterator[Protection]:
    """Sealed for the length of the block; a block inside another one keeps the outer seal."""
    if _current is not None:
        yield _current
        return
    protection = seal(names, granted)
    try:
        yield protection
    finally:
        unseal()
