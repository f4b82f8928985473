"""The package's shape stays readable: the imports form no loop, the foundation (`watcher/core/`) imports no
capability, a capability's settings section loads without the capability's code, and no module grows past
600 lines. Read from the source with `ast`, so a new import that breaks a rule fails here, naming it."""

from __future__ import annotations

import pytest

from tests.import_graph import PACKAGE, Import, capability, cycles, read_graph

MAX_LINES = 600


@pytest.fixture(scope="module")
def graph() -> dict[str, list[Import]]:
    return read_graph()


def test_the_graph_is_read(graph: dict[str, list[Import]]) -> None:
    # A reader that found nothing would pass every rule below.
    assert len(graph) > 150
    assert any(edge.target == "watcher.core.clock" for edges in graph.values() for edge in edges)
    assert any(not edge.top_level for edges in graph.values() for edge in edges)


def test_the_imports_form_no_loop(graph: dict[str, list[Import]]) -> None:
    loops = cycles(graph)
    described = []
    for component in loops:
        members = set(component)
        edges = [f"{e.source}:{e.line} → {e.target}" for m in component for e in graph[m] if e.target in members]
        described.append("; ".join(edges))
    assert not loops, "import loops:\n" + "\n".join(described)


def test_the_foundation_imports_no_capability(graph: dict[str, list[Import]]) -> None:
    outside = [
        f"{edge.source}:{edge.line} imports {edge.target}"
        for name, edges in graph.items()
        if capability(name) == "core"
        for edge in edges
        if capability(edge.target) != "core"
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
        if edge.top_level and not (capability(edge.target) == "core" or edge.target.endswith(".settings"))
    ]
    assert not wrong, "a settings module imports only the foundation and other settings:\n" + "\n".join(wrong)


def test_the_capability_reader_names_the_folder() -> None:
    assert capability("watcher.suites.settings") == "suites"
    assert capability("watcher.core.clock") == "core"
    assert capability("watcher.core") == "core"
    assert capability("watcher.service") == "(top)"


def test_the_loop_finder_finds_a_loop() -> None:
    edge = Import
    looped = {
        "a": [edge("a", "b", 1, True)],
        "b": [edge("b", "c", 1, True)],
        "c": [edge("c", "a", 1, False)],
        "d": [edge("d", "a", 1, True)],
    }
    assert cycles(looped) == [["a", "b", "c"]]
    assert cycles({"a": [edge("a", "b", 1, True)], "b": []}) == []


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE.parent)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by concern): {long}"
