"""The run boundary against real installers: a hostile sdist's setup.py (uv) and a hostile npm postinstall.

Each installer script tries what a supply-chain worm would: read the Slack token file named in the
config, open the state database and write a table, write a `.pth` into another team's environment,
leave a `setsid` daemon behind, read a root-only file (as root), and reach a service on the host's
127.0.0.1. It writes what it managed into `attack.json` in the folder it may write (the environment
being built), and the test checks both that file and the effects themselves.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sysconfig
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.helpers import skip_unless_ci
from tests.suites.helpers import FIXTURES, fixture_server, write_config
from watcher.boundary import sandbox, toolchain
from watcher.config import load_config
from watcher.suites.build.env import READY_MARKER, EnvResult, env_digest, prepare_env
from watcher.suites.runner import run_check

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT_ONLY = Path("/etc/security/opasswd")
# A .pth in the watcher's own venv would run at its next start (`mcp-watcher status`); a comment-only one
# here, so that even a run where it lands (no room, as root) plants nothing that runs.
WATCHER_PTH = Path(sysconfig.get_paths()["purelib"]) / "zz-mcp-watcher-boundary-test.pth"


def _boundary_problem() -> str | None:
    chosen = sandbox.choose("bubblewrap")
    return None if chosen.active else chosen.reason


@pytest.fixture
def host_service() -> Iterator[int]:
    """A service on the host's loopback (like the health port or a local fake) that installs must not reach."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()
    hits: list[int] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            hits.append(1)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join(timeout=2)
    listener.close()


class Scene:
    """The watcher's folders as a deployment has them, a victim team's server and the attack's targets."""

    def __init__(self, tmp_path: Path, mode: str, port: int) -> None:
        self.tmp = tmp_path
        self.mode = mode
        self.port = port
        self.envs = tmp_path / "envs"
        self.token = "xoxb-boundary-" + os.urandom(6).hex()
        self.token_file = tmp_path / "secrets" / "slack-token"
        self.token_file.parent.mkdir()
        self.token_file.write_text(self.token, encoding="utf-8")
        self.token_file.chmod(0o600)
        self.daemon_mark = "mcp-watcher-test-daemon-" + os.urandom(6).hex()
        self.canary = tmp_path / "canary.txt"  # a host file the watcher must never be made to write
        self.canary.write_text("untouched", encoding="utf-8")
        victim = fixture_server("victim", "hunter_server", ["python", "-m", "hunter_server", "--port", "{port}"])
        self.loaded = write_config(tmp_path, [victim], self.envs, sandbox=mode)
        data = yaml.safe_load(self.loaded.path.read_text(encoding="utf-8"))
        data["slack"] = {"token_env": None, "token_file": str(self.token_file)}
        self.loaded.path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        self.loaded = load_config(self.loaded.path, base_dir=self.loaded.base_dir)
        self.state = self.loaded.resolve(self.loaded.config.state)
        self.state.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(self.state) as db:
            db.execute("create table outbox (k text)")
        self.victim_glob = str(self.envs / "victim" / "*" / "venv" / "lib" / "python*" / "site-packages")

    def targets(self) -> dict[str, object]:
        return {
            "TOKEN": str(self.token_file),
            "DB": str(self.state),
            "VICTIM": self.victim_glob,
            "DAEMON": self.daemon_mark,
            "PORT": self.port,
            "REPORT": str(self.tmp / "attack.json"),  # where it writes without a room (no private cache)
            "WATCHER_VENV": str(WATCHER_PTH),
            "CANARY": str(self.canary),
        }

    def check_victim(self) -> dict[str, Any]:
        return run_check(self.loaded, "victim", "2.3.0")

    def daemons(self) -> list[int]:
        """Processes the attack left running (found by the unique mark in their command line)."""
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                except OSError:
                    continue
                if self.daemon_mark.encode() in cmdline and _running(int(entry)):
                    found.append(int(entry))
        return found

    def cleanup(self) -> None:
        for pid in self.daemons():
            os.kill(pid, 9)
        WATCHER_PTH.unlink(missing_ok=True)

    def tables(self) -> list[str]:
        with sqlite3.connect(self.state) as db:
            return [row[0] for row in db.execute("select name from sqlite_master where type='table'")]


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


SETUP_PY = """\
import glob, json, os, socket, sqlite3, subprocess, sys
from setuptools import setup

T = json.loads({targets!r})
R = {{}}


def attempt(name, fn):
    try:
        R[name] = "DONE: " + str(fn())[:200]
    except Exception as exc:
        R[name] = "STOPPED: " + type(exc).__name__ + ": " + str(exc)[:200]


def write_db():
    db = sqlite3.connect(T["DB"])
    db.execute("create table pwned (x text)")
    db.commit()
    return "table written"


def poison():
    found = glob.glob(T["VICTIM"])
    if not found:
        raise FileNotFoundError("no other environment in sight")
    for folder in found:
        with open(os.path.join(folder, "zz_poison.pth"), "w") as out:
            out.write("import sys; sys.stderr.write('POISONED\\\\n')\\n")
    return found


def daemon():
    code = "import os, time; os.fork() and os._exit(0); os.setsid(); time.sleep(300)"
    proc = subprocess.Popen([sys.executable, "-c", code, T["DAEMON"]], start_new_session=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc.wait()
    return "left running"


attempt("token", lambda: open(T["TOKEN"]).read())
attempt("state_db", write_db)
attempt("poison", poison)
attempt("daemon", daemon)
attempt("root_only", lambda: open({root_only!r}).read())
attempt("watcher_venv", lambda: open(T["WATCHER_VENV"], "w").write("# planted by a test\\n"))
attempt("host_loopback", lambda: socket.create_connection(("127.0.0.1", T["PORT"]), timeout=3).close() or "connected")
cache = os.environ.get("UV_CACHE_DIR")  # in a room: <env>/.cache/uv, the one folder it may write
env = os.path.dirname(os.path.dirname(cache)) if cache else None


def swap_log():
    # The watcher appends to <env>/install.log: make that a link to a file of the host's.
    os.symlink(T["CANARY"], os.path.join(env, "log-link"))
    os.replace(os.path.join(env, "log-link"), os.path.join(env, "install.log"))
    return "swapped"


def plant_marker():
    # The watcher writes <env>/mcp-watcher-env.json after the build: have it write through a link.
    target = os.path.join(env, "mcp-watcher-env.json")
    if not os.path.lexists(target):
        os.symlink(T["CANARY"], target)
    return "planted"


if env:
    attempt("log_swap", swap_log)
    attempt("marker_link", plant_marker)
report = os.path.join(env, "attack.json") if env else T["REPORT"]
with open(report, "w") as out:
    out.write(json.dumps(R))
setup(name="evil-helper", version="0.1", py_modules=[])
"""


POSTINSTALL_JS = """\
const fs = require("fs"), cp = require("child_process"), path = require("path");
const T = JSON.parse({targets});
const R = {{}};
function attempt(name, fn) {{
  try {{ R[name] = "DONE: " + String(fn()).slice(0, 200); }}
  catch (e) {{ R[name] = "STOPPED: " + String(e.message).slice(0, 200); }}
}}
attempt("token", () => fs.readFileSync(T.TOKEN, "utf8"));
attempt("state_db", () => {{
  const {{ DatabaseSync }} = require("node:sqlite");
  new DatabaseSync(T.DB).exec("create table pwned (x text)");
  return "table written";
}});
attempt("poison", () => {{
  const root = T.VICTIM.split("/*/")[0];
  const written = [];
  for (const env of fs.readdirSync(root)) {{
    const lib = path.join(root, env, "venv", "lib");
    for (const py of fs.readdirSync(lib)) {{
      const target = path.join(lib, py, "site-packages", "zz_poison.pth");
      fs.writeFileSync(target, "import sys; sys.stderr.write('POISONED\\\\n')\\n");
      written.push(target);
    }}
  }}
  if (!written.length) throw new Error("no other environment in sight");
  return written.join(",");
}});
attempt("daemon", () => {{
  const child = cp.spawn(process.execPath, ["-e", "setTimeout(() => {{}}, 300000)", T.DAEMON],
                         {{ detached: true, stdio: "ignore" }});
  child.unref();
  return "left running";
}});
attempt("root_only", () => fs.readFileSync({root_only}, "utf8"));
attempt("watcher_venv", () => {{ fs.writeFileSync(T.WATCHER_VENV, "# planted by a test\\n"); return "written"; }});
attempt("host_loopback", () => {{
  const probe = "const s = require('net').connect(" + T.PORT + ", '127.0.0.1', () => process.exit(0));" +
                "s.on('error', () => process.exit(1)); setTimeout(() => process.exit(2), 3000);";
  const done = cp.spawnSync(process.execPath, ["-e", probe]);
  if (done.status !== 0) throw new Error("no connection (exit " + done.status + ")");
  return "connected";
}});
fs.writeFileSync(path.join(process.env.INIT_CWD, "attack.json"), JSON.stringify(R));
"""


def hostile_sdist(folder: Path, scene: Scene) -> Path:
    """A real sdist whose setup.py attacks when uv builds it."""
    root = folder / "evil_helper-0.1"
    root.mkdir(parents=True)
    text = SETUP_PY.format(targets=json.dumps(scene.targets()), root_only=str(ROOT_ONLY))
    (root / "setup.py").write_text(text, encoding="utf-8")
    (root / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: evil-helper\nVersion: 0.1\n", encoding="utf-8")
    sdist = folder / "evil_helper-0.1.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(root, arcname=root.name)
    return sdist


def hostile_python_project(folder: Path, scene: Scene, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The hunter fixture (an MCP server on mcp 2.x) depending on `evil-helper`, which a local package
    index (a find-links folder, as a mirror would serve it) has only as the hostile sdist."""
    project = folder / "hostile"
    shutil.copytree(FIXTURES / "hunter_server", project, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    sdist = hostile_sdist(folder / "dist", scene)
    monkeypatch.setenv("UV_FIND_LINKS", str(sdist.parent))
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace('dependencies = ["mcp>=2"]', 'dependencies = ["mcp>=2", "evil-helper==0.1"]'), encoding="utf-8"
    )
    return project


def hostile_npm_project(folder: Path, scene: Scene) -> Path:
    """A project depending on a real `npm pack` tarball whose postinstall attacks."""
    package = folder / "evil-helper"
    package.mkdir(parents=True)
    manifest = {"name": "evil-helper", "version": "0.1.0", "scripts": {"postinstall": "node postinstall.js"}}
    (package / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    targets = json.dumps(json.dumps(scene.targets()))
    script = POSTINSTALL_JS.format(targets=targets, root_only=json.dumps(str(ROOT_ONLY)))
    (package / "postinstall.js").write_text(script, encoding="utf-8")
    done = subprocess.run(
        [*toolchain.npm_command(), "pack", "--pack-destination", str(folder)],
        cwd=package,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": f"{toolchain.node_bin_dir()}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(folder)},
    )
    assert done.returncode == 0, done.stderr
    tarball = folder / "evil-helper-0.1.0.tgz"
    assert tarball.exists()
    project = folder / "hostile-ts"
    (project / "vendor").mkdir(parents=True)
    shutil.copy(tarball, project / "vendor" / tarball.name)  # shipped in the tree, as a vendored package is
    deps = {"evil-helper": f"file:vendor/{tarball.name}"}
    (project / "package.json").write_text(
        json.dumps({"name": "hostile-ts", "version": "0.0.0", "private": True, "dependencies": deps}),
        encoding="utf-8",
    )
    return project


def build(scene: Scene, project: Path, language: str, package: str, version: str) -> EnvResult:
    return prepare_env(
        server_name="hostile",
        language=language,
        project=project,
        sdk_package=package,
        sdk_version=version,
        envs_dir=scene.envs,
        timeout=300,
        secret_names=set(),
        boundary=sandbox.choose(scene.mode),  # type: ignore[arg-type]
    )


def attack_report(env: EnvResult, scene: Scene) -> dict[str, str]:
    found = [*Path(env.path).rglob("attack.json"), *scene.tmp.glob("attack.json")]
    assert found, f"the hostile installer script did not run: {env.error} {env.evidence}"
    report: dict[str, str] = json.loads(found[0].read_text(encoding="utf-8"))
    return report


def assert_all_stopped(scene: Scene, attack: dict[str, str], victim_before: str) -> None:
    assert set(attack) - {"log_swap", "marker_link"} == {
        "token",
        "state_db",
        "poison",
        "daemon",
        "root_only",
        "host_loopback",
        "watcher_venv",
    }
    assert scene.canary.read_text(encoding="utf-8") == "untouched"
    if "log_swap" in attack:
        assert attack["log_swap"].startswith("STOPPED"), attack
    assert attack["watcher_venv"].startswith("STOPPED") and not WATCHER_PTH.exists(), attack
    assert attack["token"].startswith("STOPPED"), attack
    assert attack["state_db"].startswith("STOPPED"), attack
    assert attack["poison"].startswith("STOPPED"), attack
    assert attack["host_loopback"].startswith("STOPPED"), attack
    if os.geteuid() == 0 and ROOT_ONLY.exists():
        assert attack["root_only"].startswith("STOPPED"), attack
    # The effects, checked on the host: no table, no .pth, the other environment as sealed, no daemon.
    assert scene.tables() == ["outbox"]
    assert not list(scene.envs.glob("victim/*/venv/lib/python*/site-packages/zz_poison.pth"))
    victim_env = next(p for p in (scene.envs / "victim").iterdir() if (p / READY_MARKER).exists())
    assert env_digest(victim_env) == victim_before
    time.sleep(0.5)
    assert scene.daemons() == [], "a daemon started by the installer outlived the install"


def _victim_digest(scene: Scene) -> str:
    victim_env = next(p for p in (scene.envs / "victim").iterdir() if (p / READY_MARKER).exists())
    return env_digest(victim_env)


@pytest.fixture
def bubblewrap_scene(tmp_path: Path, host_service: int) -> Iterator[Scene]:
    problem = _boundary_problem()
    if problem:
        skip_unless_ci(f"the run boundary cannot be had here: {problem}")
    scene = Scene(tmp_path, "bubblewrap", host_service)
    yield scene
    scene.cleanup()


def test_a_hostile_setup_py_is_stopped_and_the_other_teams_run_is_unaffected(
    bubblewrap_scene: Scene, monkeypatch: pytest.MonkeyPatch
):
    scene = bubblewrap_scene
    first = scene.check_victim()
    assert first["verdict"] == "pass", first["reasons"]
    before = _victim_digest(scene)
    env = build(scene, hostile_python_project(scene.tmp / "attacker", scene, monkeypatch), "python", "mcp", "2.3.0")
    assert env.ok, (env.error, env.evidence)
    assert env.sandboxed
    assert_all_stopped(scene, attack_report(env, scene), before)
    again = scene.check_victim()
    assert again["verdict"] == "pass", again["reasons"]
    assert again["install"]["cached"] is True and again["install"]["rebuilt"] is None
    assert "POISONED" not in Path(again["run_dir"], "server.stderr.log").read_text(encoding="utf-8")


def test_a_hostile_npm_postinstall_is_stopped(bubblewrap_scene: Scene):
    scene = bubblewrap_scene
    first = scene.check_victim()
    assert first["verdict"] == "pass", first["reasons"]
    before = _victim_digest(scene)
    project = hostile_npm_project(scene.tmp / "attacker", scene)
    env = build(scene, project, "typescript", "@modelcontextprotocol/sdk", "1.32.2")
    assert env.ok, (env.error, env.evidence)
    assert_all_stopped(scene, attack_report(env, scene), before)


def test_without_the_sandbox_the_seal_and_the_subreaper_still_hold(
    tmp_path: Path, host_service: int, monkeypatch: pytest.MonkeyPatch
):
    """Sandbox off: the installer can reach the other environment, but its run finds the digest changed and
    rebuilds instead of running the planted .pth; the setsid daemon is killed when the install ends."""
    scene = Scene(tmp_path, "off", host_service)
    try:
        first = scene.check_victim()
        assert first["verdict"] == "pass", first["reasons"]
        project = hostile_python_project(tmp_path / "attacker", scene, monkeypatch)
        env = build(scene, project, "python", "mcp", "2.3.0")
        assert env.ok, (env.error, env.evidence)
        attack = attack_report(env, scene)
        assert attack["daemon"].startswith("DONE"), attack  # it did start one
        time.sleep(0.5)
        assert scene.daemons() == [], "the double-forked setsid daemon outlived the install"
        again = scene.check_victim()
        assert again["verdict"] == "pass", again["reasons"]
        if attack["poison"].startswith("DONE"):  # writable to it (e.g. as root): the seal catches the change
            assert again["install"]["cached"] is False
            assert "digest no longer matches" in again["install"]["rebuilt"]
        assert "POISONED" not in Path(again["run_dir"], "server.stderr.log").read_text(encoding="utf-8")
        assert not list(scene.envs.glob("victim/*/venv/lib/python*/site-packages/zz_poison.pth"))
    finally:
        scene.cleanup()


def test_the_servers_eval_starts_run_in_rooms(tmp_path: Path):
    """`eval` builds and starts its servers inside the same boundary: an HTTP server reached through the
    relay, in its own PID namespace; a stdio server's command is a room's."""
    problem = _boundary_problem()
    if problem:
        skip_unless_ci(f"the run boundary cannot be had here: {problem}")
    from watcher.evaluation import run as eval_run

    start = ["python", "-m", "hunter_server"]
    http = fixture_server("hunter", "hunter_server", [*start, "--port", "{port}"])
    stdio = fixture_server("hunter-stdio", "hunter_server", start, transport="stdio")
    loaded = write_config(tmp_path, [http, stdio], tmp_path / "envs", sandbox="bubblewrap")
    versions = {"baseline": "2.3.0", "candidate": "2.3.0"}
    with eval_run.built_sides(loaded, loaded.config.server("hunter"), versions, tmp_path / "logs", None) as targets:
        for side, target in targets.items():
            assert target.url is not None
            assert httpx.post(target.url, json={}, timeout=10).status_code < 500, side
    for side in versions:
        log = (tmp_path / "logs" / side / "server.stderr.log").read_text(encoding="utf-8")
        seen = json.loads(next(line for line in log.splitlines() if line.startswith("HUNT-REPORT "))[12:])
        assert all(int(pid) < 10 for pid in seen["proc_environ"]), "not in a PID namespace of its own"
    with eval_run.built_sides(loaded, loaded.config.server("hunter-stdio"), versions, tmp_path / "logs", None) as t:
        assert all((target.command or [""])[0] == sandbox.find_bwrap() for target in t.values())
