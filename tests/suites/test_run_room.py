"""The run step's room without any install: a server on the system's Python, inside and outside bubblewrap.

- inside: no route out (not even to the host's 127.0.0.1), reached through the relay, not root, and every
  process it started ends with it;
- outside (sandbox off): a double-forking `setsid` daemon the server leaves is killed when it stops.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers import skip_unless_ci
from tests.suites.helpers import process_running
from watcher.boundary import reaper, sandbox
from watcher.boundary.launch import Host, HostReason
from watcher.boundary.process import ServerProcess, free_port, run_command, scrubbed_env

SYSTEM_PYTHON = "/usr/bin/python3"
ROOT = Path(__file__).resolve().parents[2]

# An HTTP server that first tries to reach the host, leaves a double-forked setsid daemon (its pid
# written to the log), reports what it is, then answers every POST.
SERVER = """
import http.server, json, os, socket, sys, time
port, host_port, mark = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
seen = {"uid": os.getuid()}
try:
    socket.create_connection(("127.0.0.1", host_port), timeout=2).close()
    seen["host_loopback"] = "connected"
except OSError as exc:
    seen["host_loopback"] = "refused: " + str(exc)
try:
    socket.create_connection(("192.0.2.1", 80), timeout=2).close()
    seen["outside"] = "connected"
except OSError as exc:
    seen["outside"] = "refused: " + str(exc)
try:
    open("/etc/security/opasswd").read()
    seen["root_only"] = "read"
except OSError as exc:
    seen["root_only"] = "refused: " + str(exc)
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(w, str(os.getpid()).encode())
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", mark])
    os._exit(0)
seen["daemon_pid"] = int(os.read(r, 32))
print("SEEN " + json.dumps(seen), file=sys.stderr, flush=True)

class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


@pytest.fixture
def host_port() -> Iterator[int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield listener.getsockname()[1]
    listener.close()


def _serve(tmp_path: Path, boundary: sandbox.Sandbox, host_port: int) -> tuple[dict[str, object], ServerProcess]:
    script = tmp_path / "project" / "server.py"
    script.parent.mkdir()
    script.write_text(SERVER, encoding="utf-8")
    port = free_port()
    mark = "mcp-watcher-room-daemon-" + os.urandom(4).hex()
    server = ServerProcess(
        [SYSTEM_PYTHON, str(script), str(port), str(host_port), mark],
        cwd=script.parent,
        env=scrubbed_env(),
        log_dir=tmp_path / "logs",
        transport="http",
        http_path="/mcp",
        port=port,
        launcher=boundary.room(readable=[script.parent]),
    )
    started = server.start(30)
    assert started.ok, (started.error, started.evidence)
    line = next(
        line for line in server.stderr_path.read_text(encoding="utf-8").splitlines() if line.startswith("SEEN ")
    )
    return json.loads(line.removeprefix("SEEN ")), server


@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason="no system Python at /usr/bin/python3")
def test_an_http_server_in_its_room_has_no_route_out_and_is_reached_through_the_relay(tmp_path: Path, host_port: int):
    boundary = sandbox.choose("bubblewrap")
    if not boundary.active:
        skip_unless_ci(f"the run boundary cannot be had here: {boundary.reason}")
    seen, server = _serve(tmp_path, boundary, host_port)
    try:
        assert str(seen["host_loopback"]).startswith("refused"), seen
        assert str(seen["outside"]).startswith("refused"), seen
        assert seen["uid"] != 0
        if os.geteuid() == 0 and Path("/etc/security/opasswd").exists():
            assert str(seen["root_only"]).startswith("refused"), seen
        assert server.url is not None and server.launcher.netns_pid is not None  # reached through the relay
        assert httpx.post(server.url, json={}, timeout=5).status_code == 200
    finally:
        server.stop()
    # The daemon lived in the room's PID namespace: it ended with the room (pid there is not ours to check;
    # look for its mark instead).
    time.sleep(0.3)
    assert not _marked_processes(str(server.command[-1]))


@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason="no system Python at /usr/bin/python3")
def test_a_double_forking_server_leaves_nothing_behind_without_the_sandbox(tmp_path: Path, host_port: int):
    seen, server = _serve(tmp_path, sandbox.choose("off"), host_port)
    daemon = int(str(seen["daemon_pid"]))
    try:
        assert process_running(daemon), "the fixture's daemon did not start"
        assert os.getpgid(daemon) != os.getpgid(server.proc.pid if server.proc else 0)  # it left the group
    finally:
        server.stop()
    assert not process_running(daemon), "the setsid daemon outlived the server"


def test_a_step_that_leaves_a_setsid_daemon_has_it_killed(tmp_path: Path):
    mark = "mcp-watcher-step-daemon-" + os.urandom(4).hex()
    code = (
        "import os, subprocess, sys; "
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', '{mark}'], "
        "start_new_session=True); "
        "print(p.pid)"
    )
    result = run_command(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=scrubbed_env().env,
        timeout=30,
        log_path=tmp_path / "log",
        launcher=Host(HostReason.OPTED_OUT),
    )
    assert result.ok
    daemon = int(Path(result.log).read_text().split()[-1])
    assert not process_running(daemon)
    assert reaper.become_subreaper() is True


def _marked_processes(mark: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if mark.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return [pid for pid in found if process_running(pid)]


def test_a_required_boundary_that_cannot_be_had_is_loud_in_readyz_and_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from starlette.testclient import TestClient

    from watcher.core.store import Store
    from watcher.core.timefmt import utcnow
    from watcher.ops.health import Readiness, build_app

    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)  # a deployment without bubblewrap
    check = sandbox.self_check("bubblewrap")
    assert check["ok"] is False and check["refused"] is True
    assert str(check["text"]).startswith("REFUSED: suites.sandbox is bubblewrap, but it cannot run here: bwrap is not")
    app = build_app(Readiness(Store(tmp_path / "watcher.db"), 30, utcnow(), lambda: True, None, check))
    with TestClient(app) as client:
        answer = client.get("/readyz")
    assert answer.status_code == 503
    assert answer.json()["problems"] == [f"run boundary: {check['text']}"]
    assert answer.json()["sandbox"]["mode"] == "off"
    # `auto` without it is refused the same way; only the explicit opt-out runs outside code on the host.
    auto = sandbox.self_check("auto")
    assert auto["ok"] is False and auto["refused"] is True
    assert "set suites.sandbox: none to run it without a sandbox" in str(auto["text"])
    for opt_out in ("none", "off"):
        assert sandbox.self_check(opt_out)["ok"] is True  # type: ignore[arg-type]
        assert sandbox.choose(opt_out).room(readable=[]).describe().startswith("host (opted out")  # type: ignore[arg-type]


def test_rooms_leave_no_zombie_behind(tmp_path: Path):
    """bwrap's parent exits without reaping the room's first process, which the subreaper then inherits:
    each step reaps those (a long-running service would otherwise pile them up)."""
    boundary = sandbox.choose("bubblewrap")
    if not boundary.active:
        skip_unless_ci(f"the run boundary cannot be had here: {boundary.reason}")
    env = scrubbed_env().env
    before = set(_zombie_children())  # other tests' leftovers in this process are not this test's
    for command, timeout in ((["true"], 10.0), (["sleep", "30"], 0.5), (["true"], 10.0)):
        run_command(
            command,
            cwd=tmp_path,
            env=env,
            timeout=timeout,
            log_path=tmp_path / "log",
            launcher=boundary.room(readable=[]),
        )
    deadline = time.monotonic() + 5
    while set(_zombie_children()) - before and time.monotonic() < deadline:
        time.sleep(0.1)
        reaper.reap_rooms()
    assert set(_zombie_children()) - before == set()


def _zombie_children() -> list[int]:
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == "Z" and int(fields[1]) == me:
                found.append(int(entry))
    return found


UNPRIVILEGED_UID = 10001
"""The deploy kit's service user; here only a number to run a watcher as, without root."""

NON_ROOT_DRIVER = """
import sys, time, subprocess, urllib.request
from watcher.boundary import sandbox
folder, port = sys.argv[1], int(sys.argv[2])
boundary = sandbox.choose("bubblewrap")
if not boundary.active:
    print("NO ROOM " + boundary.reason); sys.exit(0)
room = boundary.room(readable=[folder])
server = room.start(["/usr/bin/python3", "-m", "http.server", "--bind", "127.0.0.1", str(port), "--directory", folder],
                    cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
host_port = room.expose(port)
body = b""
for _ in range(100):
    try:
        body = urllib.request.urlopen(f"http://127.0.0.1:{host_port}/mark.txt", timeout=2).read()
        break
    except OSError:
        time.sleep(0.1)
print("NETNS" if room.netns_pid else "NO NETNS", body.decode(), flush=True)  # no network of its own but the relay
server.kill(); server.wait(); room.close()
"""


def _readable_by_anyone(path: Path) -> bool:
    return all(p.stat().st_mode & 0o005 == 0o005 for p in [path, *path.parents])


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a watcher as another, unprivileged uid")
@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason="no system Python at /usr/bin/python3")
def test_a_watcher_that_is_not_root_reaches_its_server_in_a_room_through_the_relay():
    """Issue 37 (found by the image lane, where the watcher is uid 10001): unprivileged bwrap nests the room's
    process in a user namespace below the one that owns its network, so a relay joining `/proc/PID/ns/user`
    could not enter the network (EPERM) and the watcher never reached a server in a room. It joins the
    network's owner now (as slirp4netns does)."""
    import shutil
    import tempfile

    if not _readable_by_anyone(ROOT / "watcher"):
        pytest.skip(f"the checkout ({ROOT}) is not readable by another uid")
    if shutil.which("bwrap") is None or shutil.which("setpriv") is None:
        pytest.skip("no bwrap or setpriv here")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)
        mark = "served from a room " + os.urandom(4).hex()
        (folder / "mark.txt").write_text(mark)
        (folder / "driver.py").write_text(NON_ROOT_DRIVER)
        for path in folder.iterdir():
            path.chmod(0o644)
        done = subprocess.run(
            ["setpriv", f"--reuid={UNPRIVILEGED_UID}", f"--regid={UNPRIVILEGED_UID}", "--clear-groups",
             "--inh-caps=-all", "--", SYSTEM_PYTHON, str(folder / "driver.py"), str(folder), str(free_port())],
            env={"PATH": "/usr/bin:/bin", "HOME": str(folder), "PYTHONPATH": str(ROOT)},
            cwd=folder, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    if done.stdout.startswith("NO ROOM"):
        pytest.skip(f"an unprivileged uid gets no room here: {done.stdout.strip()}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"NETNS {mark}", done.stdout + done.stderr
    assert "did not start" not in done.stderr
