"""The package's shape stays readable: the imports follow the layer table (a module imports only its own layer
and the layers below it), form no loop, a capability's settings section loads without the capability's code,
and no module grows past 600 lines. Read from the source with `ast`, so a new import that breaks a rule fails
here, naming it. The table is the one in docs/contributing.md and the README's package map."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.import_graph import PACKAGE, Import, capability, cycles, read_graph

MAX_LINES = 600

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundation", frozenset({"core"})),
    ("model", frozenset()),  # MODEL_MODULES and every capability's `settings` module
    ("parts", frozenset({"boundary", "sources", "spec", "contract", "notify", "decisions"})),
    (
        "stages",
        frozenset(
            {"polling", "suites", "evaluation", "readiness", "backtest", "digest", "repos", "clusters", "serverset"}
        ),
    ),
    ("faces", frozenset({"web", "slackapp", "ops"})),
    ("top", frozenset({"(top)"})),  # cli, service, pipeline, startup_check, … and every `commands` module
)
"""Bottom-up: a module imports only its own layer and the layers listed before it."""

MODEL_MODULES = {"watcher.config", "watcher.live"}
"""The configuration and the one live configuration every part reads (the model layer, with every `settings`)."""

UPWARD_ALLOWED = {
    ("watcher.contract.settings", "watcher.contract.rules"): "the validator of `levels:` looks a rule name up, late",
    (
        "watcher.sources.settings",
        "watcher.sources.urls",
    ): "the validator of an SDK's `url:` asks its registry's form, late",
    (
        "watcher.suites.settings",
        "watcher.contract.snapshot",
    ): "the validator of a client profile asks the snapshot, late",
}
"""The only arrows that point up, each a settings validator's late look-up (run when a value is checked, not
when the settings module is imported)."""


def layer_of(module: str) -> int:
    """The index of the module's layer in LAYERS."""
    if module in MODEL_MODULES or module.endswith(".settings"):
        return 1
    folder = module.split(".")[1] if "." in module else "(top)"
    if module.endswith(".commands") or not (PACKAGE / folder).is_dir():  # cli, service, … directly under watcher/
        return len(LAYERS) - 1
    for index, (_, folders) in enumerate(LAYERS):
        if folder in folders:
            return index
    raise AssertionError(f"{module} is in no layer: add its folder to LAYERS (and to docs/contributing.md)")


def _named(module: str) -> str:
    return f"{module} ({LAYERS[layer_of(module)][0]})"


def upward(graph: dict[str, list[Import]]) -> list[str]:
    return [
        f"{_named(edge.source).replace(' ', f':{edge.line} ', 1)} imports {_named(edge.target)}"
        for name, edges in graph.items()
        for edge in edges
        if layer_of(edge.target) > layer_of(name)
        and not (not edge.top_level and (edge.source, edge.target) in UPWARD_ALLOWED)
    ]


@pytest.fixture(scope="module")
def graph() -> dict[str, list[Import]]:
    return read_graph()


def test_the_graph_is_read(graph: dict[str, list[Import]]) -> None:
    # A reader that found nothing would pass every rule below.
    assert len(graph) > 150
    assert any(edge.target == "watcher.core.clock" for edges in graph.values() for edge in edges)
    assert any(not edge.top_level for edges in graph.values() for edge in edges)


def test_every_module_is_in_a_layer(graph: dict[str, list[Import]]) -> None:
    layers = {LAYERS[layer_of(name)][0] for name in graph}
    assert layers == {name for name, _ in LAYERS}  # each layer holds something: the table is not stale


def test_no_import_points_up_the_layer_table(graph: dict[str, list[Import]]) -> None:
    wrong = upward(graph)
    assert not wrong, "imports that point up the layer table (LAYERS; docs/contributing.md):\n" + "\n".join(wrong)


def test_a_hand_added_upward_import_is_found(graph: dict[str, list[Import]]) -> None:
    # polling (a stage) importing the Slack app (a face): what this table exists to stop.
    planted = {
        **graph,
        "watcher.polling.poll": [
            *graph["watcher.polling.poll"],
            Import("watcher.polling.poll", "watcher.slackapp.app", 1, True),
        ],
    }
    assert upward(planted) == ["watcher.polling.poll:1 (stages) imports watcher.slackapp.app (faces)"]
    late_allowed = Import(
        "watcher.contract.settings", "watcher.contract.rules", 9, True
    )  # the same arrow, at import time
    planted = {**graph, "watcher.contract.settings": [late_allowed]}
    assert upward(planted) == ["watcher.contract.settings:9 (model) imports watcher.contract.rules (parts)"]


def test_an_upward_import_planted_in_a_file_is_named_with_both_modules(tmp_path: Path) -> None:
    # The whole check, from the source: a copy of the package with one module added in `polling` (a stage)
    # that imports the Slack app (a face), read by the same reader and judged by the same rule.
    copy = tmp_path / "watcher"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "templates", "static"))
    (copy / "polling" / "planted.py").write_text(
        '"""A hand-added upward import."""\n\nfrom watcher.slackapp.app import slack_action_reply\n', encoding="utf-8"
    )
    planted = read_graph(package=copy)
    assert "watcher.polling.planted" in planted
    assert upward(planted) == ["watcher.polling.planted:3 (stages) imports watcher.slackapp.app (faces)"]


def test_each_allowed_upward_arrow_still_exists(graph: dict[str, list[Import]]) -> None:
    arrows = {(edge.source, edge.target) for edges in graph.values() for edge in edges if not edge.top_level}
    assert set(UPWARD_ALLOWED) <= arrows, set(UPWARD_ALLOWED) - arrows


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
