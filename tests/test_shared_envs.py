"""The session's shared SDK environments (`sdk_envs` in tests/conftest.py) keep no order between tests: a test
that uses them never asserts whether its environment was built or found cached (who built it first depends on
the order and on the other xdist worker). Read from the source with `ast`."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT

BUILD_STATE = {"cached", "rebuilt", "prebuilt"}
"""What tells a fresh build from a found one: asserting it only holds in a folder of the test's own."""


def _users() -> dict[Path, list[ast.FunctionDef]]:
    found: dict[Path, list[ast.FunctionDef]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
        # A module's own fixture that hands the shared folder on (suite e2e's `envs`) counts as the folder.
        names = {"sdk_envs"} | {f.name for f in functions if "sdk_envs" in {a.arg for a in f.args.args}}
        tests = [f for f in functions if f.name.startswith("test_") and names & {a.arg for a in f.args.args}]
        if tests:
            found[path] = tests
    return found


def _reads_build_state(function: ast.FunctionDef) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and node.attr in BUILD_STATE:
            return True
        if isinstance(node, ast.Constant) and node.value in BUILD_STATE:
            return True
    return False


def test_no_test_on_the_shared_environments_asserts_how_its_environment_came():
    users = _users()
    assert len(users) >= 3, f"the reader found too few users of sdk_envs: {sorted(map(str, users))}"
    wrong = [
        f"{path.relative_to(ROOT)}::{function.name}"
        for path, functions in users.items()
        for function in functions
        if _reads_build_state(function)
    ]
    assert not wrong, "these read cached/rebuilt/prebuilt on the shared environments (give them their own):\n" + (
        "\n".join(wrong)
    )


def test_the_reader_sees_a_build_state_assertion():
    planted = ast.parse("def test_x(sdk_envs):\n    assert report['install']['cached'] is True\n")
    [function] = [n for n in ast.walk(planted) if isinstance(n, ast.FunctionDef)]
    assert _reads_build_state(function)
