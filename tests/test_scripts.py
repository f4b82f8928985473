"""The README's two commands as scripts: `scripts/run` keeps the caller's folder, `scripts/test`'s apt lines."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
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


IMAGE_SCRIPT, IMAGE_LANE = ROOT / "scripts" / "image", ROOT / "scripts" / "image_lane.py"


def _lane_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("image_lane", IMAGE_LANE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("image_lane", module)  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_the_image_lane_installs_only_its_tools_and_waits_for_the_apt_lock():
    """The image lane (issue 37) is not run in CI (root, minutes of build): its script is checked here."""
    text = IMAGE_SCRIPT.read_text(encoding="utf-8")
    assert os.access(IMAGE_SCRIPT, os.X_OK)
    assert re.search(r"for tool in mmdebstrap podman buildah; do", text)
    installs = [line for line in text.splitlines() if re.search(r"apt-get\b.*\binstall\b", line)]
    assert installs and all("--no-install-recommends" in line or "\\" in line for line in installs)
    assert "--no-install-recommends" in text and "DPkg::Lock::Timeout" in text
    assert not re.search(r"apt-get\s+(-\S+\s+)*(upgrade|dist-upgrade|full-upgrade)", text)
    assert 'exec "$venv/bin/python" scripts/image_lane.py "$@"' in text


def test_the_image_lane_builds_as_the_design_says_and_keeps_downloads_out_of_the_checkout():
    lane = _lane_module()
    assert lane.STEPS == ("base", "build", "check", "cycle", "rooms", "unit")
    assert not lane.WORK.resolve().is_relative_to(ROOT), "the base tarball and the steps' folders are elsewhere"
    assert lane.BASE_PACKAGES.split(",") == ["python3", "python3-venv", "python-is-python3", "ca-certificates"]
    source = IMAGE_LANE.read_text(encoding="utf-8")
    build = source.split("def step_build", 1)[1].split("\ndef ", 1)[0]
    for piece in ('"--isolation=chroot"', '"--network=host"', '"--format", "docker"', "PYTHON_IMAGE=",
                  '"-f", "deploy/Dockerfile"', ':ro"', "Healthcheck"):  # fmt: skip
        assert piece in build, piece
    assert '"--user", f"{SERVICE_UID}:{SERVICE_UID}"' in source and "--isolation" in source
    assert '"setpriv", f"--reuid={SERVICE_UID}"' in source and '"bwrap", "--unshare-user"' in source
    assert lane.SERVICE_UID == 10001 and '"--as-pid-1"' in source and "signal.SIGTERM" in source
    assert "systemd-analyze" in source and '"verify"' in source and "PID 1 is" in source
    # The mirror comes from the host's own apt configuration: the lane names no archive host.
    assert "://" not in source.replace("http://127.0.0.1", "")


def test_the_image_lane_says_what_it_runs_and_refuses_an_unknown_step():
    done = subprocess.run(
        [sys.executable, str(IMAGE_LANE), "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "--steps" in done.stdout and "--rebuild" in done.stdout
    wrong = subprocess.run(
        [sys.executable, str(IMAGE_LANE), "--steps", "build,nope"], capture_output=True, text=True, timeout=120
    )
    assert wrong.returncode == 2 and "unknown step(s): nope" in wrong.stderr
    documented = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8").split("### The image lane", 1)[1]
    for step in _lane_module().STEPS:
        assert f"| `{step}` |" in documented, f"docs/operations.md § The image lane: step {step} not described"
