"""The suites' shape: one folder per stage, the conductor above them, the evaluation wired above the suites.
Read from the source (tests/import_graph.py), so an import that breaks a rule fails here, naming it."""

from __future__ import annotations

import functools
from pathlib import Path

from tests.import_graph import PACKAGE, module_name, read_graph

SUITES = PACKAGE / "suites"
STAGES = ("source", "build", "run", "judge")


@functools.cache
def _graph() -> dict[str, list[tuple[int, str]]]:
    return {
        name: [(edge.line, edge.target) for edge in edges] for name, edges in read_graph(type_checking=True).items()
    }


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every `watcher…` module a file imports (top level or late, `if TYPE_CHECKING:` included)."""
    return _graph()[module_name(path)]


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def test_every_stage_is_a_folder_with_its_modules() -> None:
    for stage in STAGES:
        docstring = (SUITES / stage / "__init__.py").read_text(encoding="utf-8").strip()
        assert docstring, f"suites/{stage}/ needs a docstring saying what the stage does"
        assert len(_modules(SUITES / stage)) >= 2


def test_no_suites_module_imports_the_evaluation() -> None:
    # What follows a finished run is the caller's (watcher/pipeline.py), not the suite worker's.
    wrong = [
        f"{path.relative_to(SUITES.parent)}:{line} imports {name}"
        for path in _modules(SUITES)
        if path.name != "settings.py"
        for line, name in _imports(path)
        if name.startswith("watcher.evaluation")
    ]
    assert not wrong, "\n".join(wrong)


def test_no_stage_imports_the_conductor_or_the_queue() -> None:
    above = ("watcher.suites.runner", "watcher.suites.worker", "watcher.suites.executors")
    wrong = [
        f"{path.relative_to(SUITES.parent)}:{line} imports {name}"
        for stage in STAGES
        for path in _modules(SUITES / stage)
        for line, name in _imports(path)
        if name.startswith(above)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_reader_sees_imports() -> None:
    # A reader that found nothing would pass every rule above.
    names = {name for _, name in _imports(SUITES / "runner.py")}
    assert "watcher.suites.build.install" in names
    assert any(name.startswith("watcher.evaluation") for _, name in _imports(SUITES.parent / "pipeline.py"))
