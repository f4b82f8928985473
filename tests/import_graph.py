"""The watcher package's import graph, read from the source with `ast` (the layering and stage tests' one
reader): which module imports which, where, and whether at import time."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "watcher"


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    top_level: bool
    """At module level (run when the module is imported), not inside a function."""


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(path, package): path for path in sorted(package.rglob("*.py"))}


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """Nodes under `if TYPE_CHECKING:`: seen by the type checker only, never run, so no loop at import time."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(inner) for inner in ast.walk(node)}
    return skipped


def _imports(name: str, path: Path, modules: dict[str, Path], *, type_checking: bool) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped = set() if type_checking else _type_checking_nodes(tree)
    top_level = {id(node) for node in tree.body}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def known(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        for target in targets:
            resolved = known(target) if target.startswith("watcher") else None
            if resolved and resolved != name:
                yield Import(name, resolved, getattr(node, "lineno", 0), id(node) in top_level)


def read_graph(*, type_checking: bool = False, package: Path = PACKAGE) -> dict[str, list[Import]]:
    """Module → the watcher modules it imports; `type_checking`: count `if TYPE_CHECKING:` imports too;
    `package`: the watcher package read (a copy, in the test that plants an import)."""
    modules = _modules(package)
    return {name: list(_imports(name, path, modules, type_checking=type_checking)) for name, path in modules.items()}


def cycles(graph: dict[str, list[Import]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for edge in graph.get(node, []):
            if edge.target not in index:
                visit(edge.target)
                low[node] = min(low[node], low[edge.target])
            elif edge.target in on_stack:
                low[node] = min(low[node], index[edge.target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def capability(module: str) -> str:
    """`watcher.suites.run.server` → `suites`; a module directly under watcher/ is the top (cli, service…)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or module == "watcher.core" else "(top)"
