"""The generic environment (`language: other`): the server declares how to pin the SDK and build.

Each `prepare` step is an argument list run in a copy of the server's tree (the work folder), in
order, with `{version}`, `{package}` and `{workdir}` substituted; `python`, `uv`, `node` and `npm`
as the first argument are the watcher's own toolchain, other names come from PATH. Steps get the
installers' scrubbed environment, share the install timeout, and write to the environment's
install.log. A failed step names itself and keeps its last output lines.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from watcher.suites import toolchain
from watcher.suites.process import run_command, scrubbed_env


class _Result(Protocol):
    ok: bool
    error: str | None
    evidence: str
    log: str
    installer: str
    project_dir: str
    bin_dirs: list[str]


def substitute(args: Sequence[str], *, version: str, package: str, workdir: str, port: int | None = None) -> list[str]:
    """Fill `{version}`, `{package}`, `{workdir}` (and `{port}` when known) into each argument."""
    values = {"{version}": version, "{package}": package, "{workdir}": workdir}
    if port is not None:
        values["{port}"] = str(port)
    out = []
    for arg in args:
        for name, value in values.items():
            arg = arg.replace(name, value)
        out.append(arg)
    return out


def toolchain_command(args: list[str]) -> list[str]:
    """`python`, `uv`, `node`, `npm` as the first argument resolve to the watcher's own copies."""
    exe, rest = args[0], args[1:]
    if exe in ("python", "python3"):
        return [toolchain.python(), *rest]
    if exe == "uv":
        uv = toolchain.uv()
        if uv is None:
            raise toolchain.ToolMissing("uv is not installed; a prepare step asks for it")
        return [uv, *rest]
    if exe == "node":
        return [toolchain.node(), *rest]
    if exe == "npm":
        return [*toolchain.npm_command(), *rest]
    return args


def build_declared(
    result: _Result,
    env_dir: Path,
    project: Path,
    sdk_package: str,
    sdk_version: str,
    timeout: float,
    secret_names: set[str],
    cancel: threading.Event | None,
    *,
    prepare: Sequence[Sequence[str]],
    copy_project: Callable[[Path, Path], None],
) -> None:
    workdir = env_dir / "project"
    copy_project(project, workdir)
    log = env_dir / "install.log"
    result.log = str(log)
    result.project_dir = str(workdir)
    result.bin_dirs = [str(workdir)]
    result.installer = "prepare"
    child = scrubbed_env(secret_names=secret_names, installer=True, tmpdir=env_dir).env
    deadline = time.monotonic() + timeout
    for number, step in enumerate(prepare, start=1):
        command = toolchain_command(substitute(step, version=sdk_version, package=sdk_package, workdir=str(workdir)))
        label = f"prepare step {number} ({' '.join(step)})"
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            result.ok, result.error = False, f"{label} not started: the install timeout of {timeout:.0f} s is spent"
            return
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"$ [step {number}] {' '.join(command)}\n")
        run = run_command(command, cwd=workdir, env=child, timeout=remaining, log_path=log, cancel=cancel)
        if not run.ok:
            result.ok = False
            result.error = f"{label} failed ({run.describe()})"
            result.evidence = run.tail
            return
    result.ok = True
