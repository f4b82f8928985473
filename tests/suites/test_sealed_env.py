"""Environments are built once, then sealed: read-only, their digest recorded; a changed one is rebuilt.

A declared build (`language: other`) whose one step writes a file stands in for an install: no network.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.helpers import skip_unless_ci
from watcher.boundary import sandbox
from watcher.suites.build.env import READY_MARKER, EnvResult, env_digest, prepare_env

STEP = ["python", "-c", "import os; open('built.txt', 'w').write(str(os.getuid()))"]


def _build(tmp_path: Path, boundary: sandbox.Sandbox | None) -> EnvResult:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "server.py").write_text("print('hello')\n", encoding="utf-8")
    return prepare_env(
        server_name="sealed",
        language="other",
        project=project,
        sdk_package="mcp",
        sdk_version="2.3.0",
        envs_dir=tmp_path / "envs",
        timeout=60,
        secret_names=set(),
        prepare=[STEP],
        boundary=boundary,
    )


@pytest.mark.parametrize("mode", ["off", "bubblewrap"])
def test_a_built_environment_is_sealed_and_a_changed_one_is_rebuilt(tmp_path: Path, mode: str):
    boundary = sandbox.choose(mode)  # type: ignore[arg-type]
    if mode == "bubblewrap" and not boundary.active:
        skip_unless_ci(f"the run boundary cannot be had here: {boundary.reason}")
    first = _build(tmp_path, boundary)
    assert first.ok, (first.error, first.evidence)
    assert first.sandboxed is (mode == "bubblewrap")
    built = Path(first.project_dir) / "built.txt"
    if mode == "bubblewrap" and os.geteuid() == 0:
        assert built.read_text() == str(sandbox.SANDBOX_UID), "the step ran as root"
    env_dir = Path(first.path)
    # Sealed: nothing in it is writable, it is the watcher's, and its digest is recorded.
    for path in [env_dir, *env_dir.rglob("*")]:
        info = path.lstat()
        if not stat.S_ISLNK(info.st_mode):
            assert not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), path
        assert info.st_uid == os.geteuid(), path
    assert first.digest == env_digest(env_dir) and first.digest in (env_dir / READY_MARKER).read_text()

    again = _build(tmp_path, boundary)
    assert again.cached and again.rebuilt is None and again.digest == first.digest

    # Someone with the watcher's powers changes it (e.g. a process outside any room): the next run rebuilds.
    built.chmod(0o644)
    built.write_text("planted", encoding="utf-8")
    rebuilt = _build(tmp_path, boundary)
    assert rebuilt.ok and not rebuilt.cached
    assert rebuilt.rebuilt is not None and "digest no longer matches" in rebuilt.rebuilt
    assert built.read_text() != "planted"
    assert rebuilt.digest == env_digest(env_dir)
