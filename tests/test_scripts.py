"""The README's two commands as scripts: `scripts/run` keeps the caller's folder, `scripts/test`'s apt lines."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
    assert "scripts/system-packages" in (ROOT / "scripts" / "test").read_text()
    text = (ROOT / "scripts" / "system-packages").read_text()
    installs = [line for line in text.splitlines() if re.search(r"apt[-_]get\b.*\binstall\b", line)]
    assert installs, "scripts/system-packages installs its Debian packages with apt-get"
    for line in installs:
        assert "--no-install-recommends" in line, line
    assert not re.search(r"apt-get\s+(-\S+\s+)*(upgrade|dist-upgrade|full-upgrade)", text)


# --- scripts/system-packages: what scripts/test and scripts/run install from Debian ---------------------------

FAKE_APT = """#!/bin/bash
here="${0%/*}"
echo "$*" >> "$here/apt.log"
read -r busy < "$here/busy"
if [ "$busy" -gt 0 ]; then
    echo $((busy - 1)) > "$here/busy"
    echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2
    exit 100
fi
if [ -f "$here/broken" ]; then echo "E: Unable to locate package bubblewrap" >&2; exit 100; fi
if [ "${*: -2:1}" = "bubblewrap" ]; then
    for tool in bwrap slirp4netns; do printf '#!/bin/bash\\n' > "$here/$tool"; /bin/chmod +x "$here/$tool"; done
fi
"""


def _fake_system(tmp_path: Path, uid: int, busy: int = 0, broken: bool = False) -> Path:
    """A PATH of its own: a fake apt-get (busy N times, then it installs the tools), id, sleep; no bwrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "apt-get").write_text(FAKE_APT)
    (bin_dir / "id").write_text(f"#!/bin/bash\necho {uid}\n")
    (bin_dir / "sleep").write_text("#!/bin/bash\n")  # the waits pass at once
    for tool in ("apt-get", "id", "sleep"):
        (bin_dir / tool).chmod(0o755)
    (bin_dir / "busy").write_text(str(busy))
    if broken:
        (bin_dir / "broken").write_text("")
    return bin_dir


def _system_packages(bin_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/bash", str(ROOT / "scripts" / "system-packages"), "--for", "scripts/test", *args],
        env={"PATH": str(bin_dir), "HOME": str(bin_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_system_packages_waits_for_another_apt_instead_of_skipping(tmp_path: Path):
    bin_dir = _fake_system(tmp_path, uid=0, busy=3)
    done = _system_packages(bin_dir, "--else-say", "the sandbox tests will be skipped", "sandbox")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("apt is busy (another apt or dpkg holds its lock): waiting") == 1
    assert "will be skipped" not in done.stderr
    calls = (bin_dir / "apt.log").read_text().splitlines()
    assert all(call.startswith("-o DPkg::Lock::Timeout=600 -qq ") for call in calls), calls
    assert calls[-1].endswith("install -y --no-install-recommends bubblewrap slirp4netns")
    assert (bin_dir / "bwrap").exists() and (bin_dir / "slirp4netns").exists()


@pytest.mark.parametrize(("uid", "broken"), [(0, True), (1000, False)], ids=["install-fails", "not-root"])
def test_a_missing_sandbox_is_said_once_and_fails_only_under_strict(tmp_path: Path, uid: int, broken: bool):
    bin_dir = _fake_system(tmp_path, uid=uid, broken=broken)
    relaxed = _system_packages(bin_dir, "--else-say", "the sandbox tests will be skipped", "sandbox")
    assert relaxed.returncode == 3
    said = [line for line in relaxed.stderr.splitlines() if "the sandbox tests will be skipped" in line]
    assert len(said) == 1, relaxed.stderr
    strict = _system_packages(bin_dir, "--strict", "--else-say", "the sandbox tests will be skipped", "sandbox")
    assert strict.returncode == 1
    assert "FAILED" in strict.stderr and "the run boundary is required here" in strict.stderr
    assert "skipped" not in strict.stderr


def test_ci_runs_the_tests_strictly_and_every_apt_call_waits_for_the_lock():
    assert re.search(r"^scripts/test --ci\b", (ROOT / ".ci" / "run").read_text(), re.M)
    text = (ROOT / "scripts" / "test").read_text()
    assert '"${CI:-}" = true' in text and "--strict" in text and "MCP_WATCHER_CI=1" in text
    for name in ("test", "run", "system-packages"):
        script = (ROOT / "scripts" / name).read_text()
        for line in script.splitlines():
            if re.search(r"\bapt-get\s+-", line) or re.search(r"\bapt-get\s+(update|install)\b", line):
                assert "DPkg::Lock::Timeout=600" in line or "as root:" in line, (name, line)
    assert "system-packages" in (ROOT / "scripts" / "run").read_text()  # scripts/run installs the sandbox too


SKIPPING_TEST = """
from tests.helpers import skip_unless_ci

def test_needs_a_sandbox():
    skip_unless_ci("bubblewrap cannot run here: test")
"""


@pytest.mark.parametrize("ci", [False, True])
def test_a_test_that_needs_the_sandbox_fails_under_ci_instead_of_skipping(tmp_path: Path, ci: bool):
    (tmp_path / "test_needs.py").write_text(SKIPPING_TEST)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "MCP_WATCHER_CI")}
    env["PYTHONPATH"] = str(ROOT)
    if ci:
        env["CI"] = "true"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "--basetemp", str(tmp_path / "temp")]
        + [str(tmp_path / "test_needs.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if ci:
        assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout
        assert "required under CI" in done.stdout
    else:
        assert done.returncode == 0 and "1 skipped" in done.stdout, done.stdout


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


FAKE_PYTHON = """#!/bin/sh
# Stands in for the venv's python: pip names two packages (and the local-index noise bootstrap drops).
case " $* " in *" -q "*|*" --quiet "*) exit 0 ;; esac  # a quiet install would say nothing
if [ "$1 $2" = "-m pip" ]; then
    echo "WARNING: Location 'file:///opt/x/simple/anyio/' is ignored: it is neither a file nor a directory."
    echo "Collecting anyio==4.0.0"
    echo "Collecting httpx==0.28.1"
fi
exit 0
"""


def test_the_first_setup_says_what_it_installs_as_it_goes(tmp_path: Path):
    # scripts/run and scripts/test set up through bootstrap: a first run names each package instead of
    # staying silent for a minute or more.
    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "bootstrap", tmp_path / "scripts" / "bootstrap")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON, encoding="utf-8")
    python.chmod(0o755)
    done = subprocess.run(
        [str(tmp_path / "scripts" / "bootstrap")], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == str(tmp_path / ".venv")
    said = done.stderr.splitlines()
    assert said[0].startswith("bootstrap: installing mcp-watcher") and "each package is named" in said[0], said
    assert said[1:3] == ["Collecting anyio==4.0.0", "Collecting httpx==0.28.1"], said
    assert not any("is ignored" in line for line in said), said
    assert said[-1] == f"bootstrap: {tmp_path / '.venv'} is ready", said


def test_ci_runs_the_installed_product_on_the_oldest_python_the_package_claims():
    lanes = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^scripts/test-installed /usr/bin/python3\b", lanes, re.M), lanes
    lane = (ROOT / "scripts" / "test-installed").read_text(encoding="utf-8")
    assert "tests/test_installed.py" in lane and "tests/test_service.py::test_service_polls" in lane
    # The lane's test module holds the git-sourced check end to end (the server that broke on 3.11.2).
    installed = (ROOT / "tests" / "test_installed.py").read_text(encoding="utf-8")
    assert "def test_a_server_from_git_is_checked_end_to_end_by_the_installed_product(" in installed
    claimed = re.search(r'^requires-python = ">=(\d+)\.(\d+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert claimed is not None
    if Path("/usr/bin/python3").exists():  # the lane's interpreter is the oldest minor version claimed
        probe = ["/usr/bin/python3", "-c", "import sys; print(*sys.version_info[:2])"]
        found = subprocess.run(probe, capture_output=True, text=True, check=True, timeout=60).stdout.split()
        assert found == [claimed.group(1), claimed.group(2)], (found, claimed.groups())
