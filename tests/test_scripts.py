"""The README's two commands as scripts: `scripts/run` keeps the caller's folder, `scripts/test`'s apt lines."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "examples" / "library" / "baseline-snapshot"


def _run_script(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MCP_WATCHER_CONFIG"}
    return subprocess.run(
        [str(ROOT / "scripts" / "run"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_scripts_run_resolves_typed_paths_against_the_callers_folder(tmp_path: Path):
    (tmp_path / "snap").mkdir()
    shutil.copytree(SNAPSHOT, tmp_path / "snap" / "a")
    shutil.copytree(SNAPSHOT, tmp_path / "snap" / "b")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "db").mkdir()
    (tmp_path / "conf" / "mine.yaml").write_text("state: db/mine.db\n")  # in the file: against conf/

    diff = _run_script(["--config", "conf/mine.yaml", "diff", "snap/a", "snap/b", "--format", "markdown"], tmp_path)
    assert diff.returncode == 0, diff.stderr
    assert "No contract changes." in diff.stdout

    status = _run_script(["--config", "conf/mine.yaml", "status"], tmp_path)
    assert status.returncode == 0, status.stderr
    assert f"state: {tmp_path / 'conf' / 'db' / 'mine.db'}" in status.stdout
    assert (tmp_path / "conf" / "db" / "mine.db").is_file()


def test_scripts_test_installs_debian_packages_without_recommends_and_upgrades_nothing():
    text = (ROOT / "scripts" / "test").read_text()
    installs = [line for line in text.splitlines() if re.search(r"apt-get\b.*\binstall\b", line)]
    assert installs, "scripts/test installs its Debian packages with apt-get"
    for line in installs:
        assert "--no-install-recommends" in line, line
    assert not re.search(r"apt-get\s+(-\S+\s+)*(upgrade|dist-upgrade|full-upgrade)", text)
