"""The product as a user installs it: wheel and sdist built, the wheel installed into a fresh virtualenv
outside the checkout, and every first command run from a third folder with relative paths.

Builds with `uv build` (the project's own uv dependency) without build isolation (the test environment's
setuptools); the wheel's dependencies come from uv's cache when it has them, else from the machine's
configured index. The registries, the spec and Slack are the loopback fakes.

`scripts/test-installed PYTHON` (in CI: Debian's /usr/bin/python3, the oldest Python the package supports)
builds the wheel once, installs it into a venv made by PYTHON and names both here (PRODUCT_VENV, PRODUCT_DIST):
these tests then drive that product instead of building their own.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import httpx
import pytest
import yaml
from uv import find_uv_bin

from tests.helpers import SERVICE_CLOCK_START, free_port
from tests.spec.helpers import spec_config
from watcher.core.clock import START_VARIABLE

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("installed"), pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parent.parent
UV = find_uv_bin()
PRODUCT_VENV = "MCP_WATCHER_TEST_PRODUCT"
"""A venv with the product installed (scripts/test-installed): the tests drive it instead of building one."""
PRODUCT_DIST = "MCP_WATCHER_TEST_DIST"
"""The folder with the wheel and sdist that venv was installed from."""


def _package_data() -> set[str]:
    """Every file the package folders hold besides modules and their notes: what the wheel must carry."""
    out = subprocess.run(["git", "ls-files", "watcher"], cwd=ROOT, capture_output=True, text=True, check=True)
    return {f for f in out.stdout.split() if not f.endswith((".py", ".md"))}


def _copy_source(dest: Path) -> Path:
    """The files a release is built from: tracked and new ones, never what .gitignore names (caches, builds)."""
    listed = subprocess.run(
        [
            "git",
            "ls-files",
            "--cached",
            "--others",
            "--exclude-standard",
            "-z",
            "pyproject.toml",
            "README.md",
            "watcher",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():  # a tracked file deleted in the work tree is not part of it
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def _run(args: list[str], cwd: Path | None = None) -> None:
    """Run a build step; on failure the assertion carries the tool's own output, which names the cause."""
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=_clean_env())
    assert done.returncode == 0, f"{args[1:3]} exited {done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"


def _clean_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "MCP_WATCHER_CONFIG") and not k.startswith(("SLACK_", "PYTEST"))
    }
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    top = tmp_path_factory.mktemp("installed")
    if os.environ.get(PRODUCT_VENV):
        venv, dist = Path(os.environ[PRODUCT_VENV]), Path(os.environ[PRODUCT_DIST])
        [wheel] = dist.glob("*.whl")
        [sdist] = dist.glob("*.tar.gz")
        return {"top": top, "wheel": wheel, "sdist": sdist, "venv": venv}
    src = _copy_source(top / "src")
    dist = top / "dist"
    _run([UV, "build", "--no-build-isolation", "--python", sys.executable, "--out-dir", str(dist), str(src)], cwd=top)
    [wheel] = dist.glob("*.whl")
    [sdist] = dist.glob("*.tar.gz")
    venv = top / "venv"
    _run([UV, "venv", "--quiet", "--python", sys.executable, str(venv)])
    install = [UV, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(wheel)]
    offline = subprocess.run([*install, "--offline"], capture_output=True, text=True, env=_clean_env())
    if offline.returncode != 0:  # not all in uv's cache: the configured index
        _run(install)
    return {"top": top, "wheel": wheel, "sdist": sdist, "venv": venv}


def test_wheel_and_sdist_carry_the_package_data(installed: dict[str, Path]):
    data = _package_data()
    assert {"watcher/web/static/style.css", "watcher/web/templates/index.html"} <= data
    wheel_files = set(zipfile.ZipFile(installed["wheel"]).namelist())
    assert data <= wheel_files, f"missing from the wheel: {sorted(data - wheel_files)}"
    with tarfile.open(installed["sdist"]) as tar:
        sdist_files = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    assert data <= sdist_files, f"missing from the sdist: {sorted(data - sdist_files)}"


def test_the_installed_product_runs_from_a_third_folder(installed: dict[str, Path], world: dict):
    venv, top = installed["venv"], installed["top"]
    exe = str(venv / "bin" / "mcp-watcher")
    work = top / "work"
    (work / "conf" / "db").mkdir(parents=True)
    shutil.copytree(ROOT / "examples" / "library", work / "library", ignore=shutil.ignore_patterns("__pycache__"))
    spec = spec_config(world["gh"], teams=[{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}])
    config = {
        **spec,
        "state": "db/watcher.db",  # in the file: relative to conf/
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": world["registry"].url("pypi/simple")}],
        "slack": {"api_url": world["slack"].api_url, "retries": 1},
        "http_client": {"timeout_seconds": 2, "retries": 0, "backoff_seconds": 0},
        "servers": [
            {
                "name": "library",
                "team": "books",
                "sdk": "python",
                "language": "python",
                "path": "../library",
                "transport": "http",
                "start": ["python", "-m", "library_server", "--port", "{port}"],
                "baseline_sdk_version": "2.3.0",
                "baseline_snapshot": "../library/baseline-snapshot",
                "requirements": [],
                "timeouts": {"install": 300, "start": 60, "suite": 300, "snapshot": 60},
            }
        ],
        "suites": {"runs_dir": "db/runs", "envs_dir": "db/envs", "sandbox": "off", "git_protocols": ["file"]},
        # A team repository: its server comes from its own file, read by the running service.
        "repos": [{"git": str(_team_repo(work / "books-repo")), "team": "books"}],
    }
    (work / "conf" / "watcher.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    env = _clean_env(**{START_VARIABLE: SERVICE_CLOCK_START})

    def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [exe, "--config", "conf/watcher.yaml", *args],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import watcher; print(watcher.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(venv)), "the installed copy, not the checkout"

    check = cli("check", "--server", "library", "--sdk-version", "2.3.0")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith("PASS: library passes on mcp 2.3.0")
    assert "check: [" in check.stderr and "installing library with mcp 2.3.0" in check.stderr  # plain progress
    run_id = check.stdout.split("Recorded as run #", 1)[1].split()[0]
    assert (work / "conf" / "db" / "runs" / "library").is_dir()

    snapshot = subprocess.run(
        [
            exe,
            "snapshot",
            "--out",
            "snaps/a",
            "--cwd",
            "library",
            "--",
            str(venv / "bin" / "python"),
            "-m",
            "library_server",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert snapshot.returncode == 0, snapshot.stderr
    assert (work / "snaps" / "a" / "modern").is_dir()
    diff = cli("diff", "library/baseline-snapshot", "snaps/a", "--format", "markdown")
    assert diff.returncode in (0, 1), diff.stderr
    assert "## Contract diff: `library/baseline-snapshot` → `snaps/a`" in diff.stdout

    port = free_port()
    service = subprocess.Popen(
        [exe, "--config", "conf/watcher.yaml", "run", "--port", str(port)],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert service.poll() is None, "the installed service died at start"
            assert time.monotonic() < deadline, "no /healthz within 60 s"
            time.sleep(0.2)
        deadline = time.monotonic() + 60
        while "shelf" not in httpx.get(f"{base}/api/status", timeout=30).text:  # the first pass over the repository
            assert service.poll() is None and time.monotonic() < deadline, "the team file's server never appeared"
            time.sleep(0.3)
        for path, marker in (
            ("/", "library"),
            ("/", 'data-server="shelf"'),
            ("/deprecations", "<html"),
            ("/clusters", "Failure clusters"),
            (f"/runs/{run_id}", "library"),
            ("/static/style.css", "{"),
        ):
            page = httpx.get(base + path, timeout=30)
            assert page.status_code == 200, (path, page.text[:300])
            assert marker in page.text, path
    finally:
        os.killpg(service.pid, signal.SIGTERM)
        try:
            service.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(service.pid, signal.SIGKILL)
            service.wait()
        log = service.stdout.read().decode() if service.stdout else ""
    assert "Traceback" not in log, log[-3000:]

    status = cli("status", "--json")
    assert status.returncode == 0, status.stderr
    assert '"state": "' + str(work / "conf" / "db" / "watcher.db") + '"' in status.stdout
    assert '"verdict": "pass"' in status.stdout
    assert '"name": "shelf"' in status.stdout  # `status` reads the team servers the service recorded


def _team_repo(folder: Path) -> Path:
    from tests.serverset.helpers import MINI
    from tests.suites.helpers import new_repo

    team_file = (
        "servers:\n  - name: shelf\n    path: shelf\n    language: other\n    sdk: python\n"
        '    baseline_sdk_version: "2.3.0"\n    transport: stdio\n    prepare: [["python3", "-c", "pass"]]\n'
        "    start: [python3, server.py]\n    requirements: []\n"
    )
    return new_repo(folder, {".mcp-watcher.yaml": team_file, "shelf/server.py": MINI.read_text()})


def test_init_writes_a_config_that_works_from_where_it_is_run(installed: dict[str, Path]):
    """Issue 37: the installed product had no way to start a config. `init` in a folder outside the checkout
    writes config/watcher.yaml there, which every command then reads by default, its state beside it; from
    another folder, --config names the same file and the same state."""
    exe = str(installed["venv"] / "bin" / "mcp-watcher")
    here = installed["top"] / "newcomer"
    elsewhere = installed["top"] / "elsewhere"
    for folder in (here, elsewhere):
        folder.mkdir()
    assert not (here / "config").exists()

    def cli(*args: str, cwd: Path = here) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, *args], cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=120)

    missing = cli("status")
    assert missing.returncode == 2 and "`mcp-watcher init` writes a first one here" in missing.stderr
    written = cli("init")
    assert written.returncode == 0, written.stderr
    assert "wrote config/watcher.yaml" in written.stdout
    assert (here / "config" / "watcher.yaml").is_file() and (here / "state").is_dir()
    check = cli("run", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.rstrip().endswith("start-up check: ready to start")
    assert f"state: {here / 'state' / 'watcher.db'}" in check.stdout
    status = cli("--config", str(here / "config" / "watcher.yaml"), "status", cwd=elsewhere)
    assert status.returncode == 0, status.stderr
    assert f"state: {here / 'state' / 'watcher.db'}" in status.stdout
    assert not (elsewhere / "state").exists(), "nothing is written where the command merely runs"
    again = cli("init")
    assert again.returncode == 1 and "exists already (--force replaces it)" in again.stderr
    assert cli("init", "--force").returncode == 0


def test_the_start_up_check_passes_installed_and_catches_missing_package_data(installed: dict[str, Path]):
    """What the Dockerfile's smoke step runs (`--config /dev/null`: the defaults, nothing else needed)."""
    exe = str(installed["venv"] / "bin" / "mcp-watcher")
    third = installed["top"] / "third"
    third.mkdir(exist_ok=True)

    def check() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [exe, "--config", "/dev/null", "run", "--check"],
            cwd=third,
            env=_clean_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )

    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    assert "mcp-watcher --config /dev/null run --check" in dockerfile and "--help" not in dockerfile
    ready = check()
    assert ready.returncode == 0, ready.stdout + ready.stderr
    assert ready.stdout.rstrip().endswith("start-up check: ready to start")
    site = next((installed["venv"] / "lib").glob("python3*/site-packages"))
    stylesheet = site / "watcher" / "web" / "static" / "style.css"
    kept = stylesheet.read_bytes()
    stylesheet.unlink()  # the wheel: no package data
    try:
        broken = check()
    finally:
        stylesheet.write_bytes(kept)  # the venv may be shared (scripts/test-installed): leave it whole
    assert broken.returncode == 1
    assert "FAIL: the installed package lacks" in broken.stdout and "style.css" in broken.stdout


def test_a_server_from_git_is_checked_end_to_end_by_the_installed_product(installed: dict[str, Path], world: dict):
    """A `source.git` server: fetched at its commit, its tree taken out of git, installed, run and judged, all by
    the installed product (on the oldest supported Python in CI: the tree extraction must work there too)."""
    from tests.suites.helpers import head, new_repo

    venv, top = installed["venv"], installed["top"]
    work = top / "git-work"
    (work / "db").mkdir(parents=True)
    repo = new_repo(top / "books-mcp", copy_from=ROOT / "examples" / "library", into="server")
    config = {
        "state": "db/watcher.db",
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": world["registry"].url("pypi/simple")}],
        "slack": {"api_url": world["slack"].api_url, "retries": 1},
        "http_client": {"timeout_seconds": 2, "retries": 0, "backoff_seconds": 0},
        "servers": [
            {
                "name": "library-git",
                "team": "books",
                "sdk": "python",
                "language": "python",
                "source": {"git": f"file://{repo}", "ref": "main", "subdir": "server"},
                "transport": "http",
                "start": ["python", "-m", "library_server", "--port", "{port}"],
                "baseline_sdk_version": "2.3.0",
                "baseline_snapshot": "server/baseline-snapshot",
                "requirements": [],
                "timeouts": {"install": 300, "start": 60, "suite": 300, "snapshot": 60},
            }
        ],
        "suites": {"runs_dir": "db/runs", "envs_dir": "db/envs", "sandbox": "off", "git_protocols": ["file"]},
    }
    (work / "watcher.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    check = subprocess.run(
        [str(venv / "bin" / "mcp-watcher"), "--config", "watcher.yaml", "check", "--server", "library-git"]
        + ["--sdk-version", "2.3.0", "--json"],
        cwd=work,
        env=_clean_env(**{START_VARIABLE: SERVICE_CLOCK_START}),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
    report = json.loads(check.stdout)
    assert report["source"]["ok"] and report["source"]["commit"] == head(repo)
    assert report["verdict"] == "pass", report["reasons"]
    assert report["contract"]["changes"] == []
