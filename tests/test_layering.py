"""The package's shape stays readable: the imports form no loop, the foundation (`watcher/core/`) imports no
capability, a capability's settings section loads without the capability's code, and no module grows past
600 lines. Read from the source with `ast`, so a new import that breaks a rule fails here, naming it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "watcher"
MAX_LINES = 600


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    top_level: bool
    """At module level (run when the module is imported), not inside a function."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """Nodes under `if TYPE_CHECKING:`: seen by the type checker only, never run, so no loop at import time."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(inner) for inner in ast.walk(node)}
    return skipped


def _imports(name: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped = _type_checking_nodes(tree)
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


def _graph() -> dict[str, list[Import]]:
    modules = _modules()
    return {name: list(_imports(name, path, modules)) for name, path in modules.items()}


def _cycles(graph: dict[str, list[Import]]) -> list[list[str]]:
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


def _capability(module: str) -> str:
    """`watcher.suites.run.process` → `suites`; a module directly under watcher/ is the top (cli, service…)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or module == "watcher.core" else "(top)"


@pytest.fixture(scope="module")
def graph() -> dict[str, list[Import]]:
    return _graph()


def test_the_graph_is_read(graph: dict[str, list[Import]]) -> None:
    # A reader that found nothing would pass every rule below.
    assert len(graph) > 150
    assert any(edge.target == "watcher.core.clock" for edges in graph.values() for edge in edges)
    assert any(not edge.top_level for edges in graph.values() for edge in edges)


def test_the_imports_form_no_loop(graph: dict[str, list[Import]]) -> None:
    cycles = _cycles(graph)
    described = []
    for component in cycles:
        members = set(component)
        edges = [f"{e.source}:{e.line} → {e.target}" for m in component for e in graph[m] if e.target in members]
        described.append("; ".join(edges))
    assert not cycles, "import loops:\n" + "\n".join(described)


def test_the_foundation_imports_no_capability(graph: dict[str, list[Import]]) -> None:
    outside = [
        f"{edge.source}:{edge.line} imports {edge.target}"
        for name, edges in graph.items()
        if _capability(name) == "core"
        for edge in edges
        if _capability(edge.target) != "core"
    ]
    assert not outside, "the foundation (watcher/core/) must import only itself:\n" + "\n".join(outside)


def test_a_settings_section_loads_without_its_capability(graph: dict[str, list[Import]]) -> None:
    # Reading the config must not start a capability's code (a validator may look a name up, late).
    settings = [name for name in graph if name.endswith(".settings")]
    assert len(settings) >= 8
    wrong = [
        f"{edge.source}:{edge.line} imports {edge.target}"
        for name in settings
        for edge in graph[name]
        if edge.top_level and not (_capability(edge.target) == "core" or edge.target.endswith(".settings"))
    ]
    assert not wrong, "a settings module imports only the foundation and other settings:\n" + "\n".join(wrong)


def test_the_capability_reader_names_the_folder() -> None:
    assert _capability("watcher.suites.settings") == "suites"
    assert _capability("watcher.core.clock") == "core"
    assert _capability("watcher.core") == "core"
    assert _capability("watcher.service") == "(top)"


def test_the_loop_finder_finds_a_loop() -> None:
    edge = Import
    looped = {
        "a": [edge("a", "b", 1, True)],
        "b": [edge("b", "c", 1, True)],
        "c": [edge("c", "a", 1, False)],
        "d": [edge("d", "a", 1, True)],
    }
    assert _cycles(looped) == [["a", "b", "c"]]
    assert _cycles({"a": [edge("a", "b", 1, True)], "b": []}) == []


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE.parent)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by concern): {long}"
