"""The suite sandbox: bubblewrap around the server under test, where the machine allows it.

What a sandboxed server sees: the system read-only (/usr and its /bin, /lib links; /etc without its
secret files), read-only its run's environment (the copy of its tree and the installed SDK) and the
interpreter or Node it runs on; a private /tmp, which is also its HOME; /proc of its own PID namespace;
a minimal /dev. It does not see the state folder, the secret files, the home folders or any process
of the watcher's. Network: a stdio server gets an empty network namespace (loopback only); an HTTP
server keeps the watcher's, because the conformance suite and the snapshot reach it at 127.0.0.1.

`suites.sandbox`: `auto` (bubblewrap when `bwrap` works here, else none, with a warning), `bubblewrap`
(a run without it is an error) or `off`.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

Setting = Literal["auto", "bubblewrap", "off"]

# The system, read-only. A top-level link (/bin -> usr/bin on merged-/usr systems) is recreated as a link.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Inside /etc: files no server needs and a root process could read.
ETC_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d")
ETC_SECRET_DIRS = ("/etc/ssh", "/etc/ssl/private")
PROBE_SECONDS = 15.0


@dataclass(frozen=True)
class Sandbox:
    """The protection suite runs get here: bubblewrap, or none (with the reason)."""

    mode: Literal["bubblewrap", "off"]
    reason: str
    bwrap: str | None = None
    isolated_network: bool = False
    """True when bwrap can also give a stdio server a network namespace of its own."""
    refused: bool = False
    """`suites.sandbox: bubblewrap` was asked for but cannot run: runs are errors, not unsandboxed."""

    @property
    def active(self) -> bool:
        return self.mode == "bubblewrap" and self.bwrap is not None

    def to_json(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "reason": self.reason,
            "network": self.network_note() if self.active else "shared with the watcher",
            "refused": self.refused,
        }

    def network_note(self) -> str:
        if not self.isolated_network:
            return "shared with the watcher (bwrap cannot make a network namespace here)"
        return "stdio servers: loopback only (own namespace); HTTP servers: shared, the suite reaches them on 127.0.0.1"

    def describe(self) -> str:
        if self.active:
            return f"bubblewrap ({self.reason}); network: {self.network_note()}"
        return f"{'REFUSED' if self.refused else 'off'}: {self.reason}"

    def wrap(
        self,
        command: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        readable: Iterable[str | os.PathLike[str]],
        hidden: Iterable[str | os.PathLike[str]] = (),
        network: bool = True,
    ) -> list[str]:
        """`command` run inside the sandbox; `readable` folders are bound read-only, `hidden` paths inside
        them are masked. `network=False` (stdio) leaves the server only a loopback interface."""
        if not self.active:
            return list(command)
        assert self.bwrap is not None
        args = [self.bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        if not network and self.isolated_network:
            args.append("--unshare-net")
        if os.geteuid() == 0:
            args += ["--cap-drop", "ALL"]  # root inside keeps no capability (no mounts, no ptrace)
        args += _system_binds()
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        bound = _outermost(Path(p).resolve() for p in readable)
        for path in bound:
            args += ["--ro-bind", str(path), str(path)]
        for path in (Path(p) for p in hidden):
            if any(_inside(path, b) for b in bound) and path.exists():
                args += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
        args += ["--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--chdir", str(Path(cwd).resolve())]
        return [*args, "--", *command]


def _system_binds() -> list[str]:
    args: list[str] = []
    for folder in SYSTEM_DIRS:
        path = Path(folder)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), folder]
        elif path.is_dir():
            args += ["--ro-bind", folder, folder]
    for secret in ETC_SECRETS:
        if Path(secret).is_file():
            args += ["--ro-bind", "/dev/null", secret]
        elif Path(secret).is_dir():
            args += ["--tmpfs", secret]
    for secret_dir in ETC_SECRET_DIRS:
        if Path(secret_dir).is_dir():
            args += ["--tmpfs", secret_dir]
    return args


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder)


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """Folders to bind, without those inside another one (and without the system, bound already)."""
    chosen: list[Path] = []
    for path in sorted(set(paths), key=lambda p: len(p.parts)):
        inside_system = any(path.is_relative_to(s) for s in ("/usr", "/etc"))
        if path.exists() and not inside_system and not any(path.is_relative_to(c) for c in chosen):
            chosen.append(path)
    return chosen


def _run_probe(command: list[str]) -> str | None:
    """None when the command ran; else why not (its last line of output)."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    last = (done.stderr or done.stdout).strip().splitlines()
    return last[-1] if last else f"exit code {done.returncode}"


@functools.cache
def probe(bwrap: str) -> tuple[str | None, bool]:
    """(why bwrap cannot run, or None; whether it can also unshare the network)."""
    base = [bwrap, "--die-with-parent", "--unshare-pid", *_system_binds(), "--proc", "/proc", "--dev", "/dev"]
    problem = _run_probe([*base, "--", "true"])
    if problem is not None:
        return problem, False
    return None, _run_probe([*base, "--unshare-net", "--", "true"]) is None


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def choose(setting: Setting) -> Sandbox:
    """The sandbox `suites.sandbox` asks for, as far as this machine allows."""
    if setting == "off":
        return Sandbox("off", "suites.sandbox is off")
    bwrap = find_bwrap()
    problem, network = probe(bwrap) if bwrap else ("bwrap is not installed (Debian package bubblewrap)", False)
    if problem is None and bwrap:
        return Sandbox("bubblewrap", bwrap, bwrap=bwrap, isolated_network=network)
    if setting == "bubblewrap":
        return Sandbox("off", f"suites.sandbox is bubblewrap, but bwrap cannot run here: {problem}", refused=True)
    log.warning("suite runs are not sandboxed: bwrap cannot run here: %s", problem)
    return Sandbox("off", f"auto: bwrap cannot run here ({problem}); servers run without a sandbox")
