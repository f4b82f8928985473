"""One port forwarded between network namespaces (`watcher/boundary/relay.py`), as root and unprivileged.

The scene (fixtures/forward_scene.py) starts a server in a room with no network, a "suite" room whose one
forwarded port leads into the server's room, and an "install" room whose one forwarded port leads to a service
on the host's loopback; each room's client also tries a service of the host it must not reach. As root the rooms
run as uid 65534 in the host's user namespace; run as uid 65534, bwrap makes user namespaces, nested, and the
relay must join the one that owns each network namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from watcher.boundary import sandbox
from watcher.boundary.network import Endpoint, Forwarded, Reach

SCENE = Path(__file__).resolve().parent / "fixtures" / "forward_scene.py"
SYSTEM_PYTHON = "/usr/bin/python3"
NOBODY = 65534


def _boundary_problem() -> str | None:
    chosen = sandbox.choose("bubblewrap")
    return None if chosen.active else chosen.reason


def _check(scene: dict[str, object]) -> None:
    if "skip" in scene:
        pytest.skip(f"the run boundary cannot be had here: {scene['skip']}")
    assert str(scene["watcher"]).startswith("server saw Host 127.0.0.1:"), scene
    suite, install = scene["suite"], scene["install"]
    assert isinstance(suite, dict) and isinstance(install, dict)
    # The suite reaches the server under test at the server's own port (the Host header it expects)...
    assert str(suite["forwarded"]).startswith("server saw Host 127.0.0.1:"), scene
    # ...and nothing of the host: the service on the host's loopback is not there.
    assert suite["other"] == "STOPPED: ConnectionRefusedError", scene
    # The install reaches the one host port it was given, and no other.
    assert install["forwarded"] == "host service", scene
    assert install["other"] == "STOPPED: ConnectionRefusedError", scene


@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason="no system Python at /usr/bin/python3")
def test_the_suite_room_reaches_the_server_and_the_install_room_its_registry_only(tmp_path: Path) -> None:
    problem = _boundary_problem()
    if problem:
        pytest.skip(f"the run boundary cannot be had here: {problem}")
    folder = tmp_path / "scene"
    folder.mkdir()  # 0755 inside tmp_path: bwrap opens the folders on the way for the room's user
    done = subprocess.run(
        [sys.executable, str(SCENE), str(folder)], capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr
    scene = json.loads(done.stdout)
    assert scene["uid"] == os.geteuid()
    _check(scene)


@pytest.mark.skipif(os.geteuid() != 0, reason="the test above already runs unprivileged")
@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason="no system Python at /usr/bin/python3")
def test_the_same_forwards_work_for_an_unprivileged_watcher() -> None:
    setpriv = shutil.which("setpriv")
    if setpriv is None or _boundary_problem():
        pytest.skip("needs setpriv and a working bwrap")
    if not os.access(SCENE, os.R_OK) or any(os.stat(p).st_mode & 0o005 != 0o005 for p in SCENE.parents[:4]):
        pytest.skip(f"the checkout is not readable by uid {NOBODY}")
    # Its own folder under /tmp (pytest's are root's, mode 0700): the unprivileged scene works there.
    folder = Path(tempfile.mkdtemp(prefix="mcp-watcher-forward-"))
    os.chown(folder, NOBODY, NOBODY)
    try:
        done = subprocess.run(
            [
                setpriv,
                f"--reuid={NOBODY}",
                f"--regid={NOBODY}",
                "--clear-groups",
                SYSTEM_PYTHON,
                str(SCENE),
                str(folder),
            ],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            env={"PATH": "/usr/bin:/bin", "HOME": str(folder)},
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    scene = json.loads(done.stdout)
    if "skip" in scene:
        pytest.skip(f"bwrap cannot make rooms for uid {NOBODY} here: {scene['skip']}")
    assert scene["uid"] == NOBODY and "own user namespace" in str(scene["user"])
    _check(scene)


def test_a_forward_that_cannot_be_made_is_an_error_and_the_room_never_runs(tmp_path: Path) -> None:
    box = sandbox.choose("bubblewrap")
    if not box.active:
        pytest.skip(f"the run boundary cannot be had here: {box.reason}")
    gone = subprocess.Popen(["true"])
    gone.wait()  # a process that no longer exists: the relay cannot join its namespace
    mark = tmp_path / "ran"
    room = box.room(readable=[], writable=[tmp_path], network=Forwarded(8080, Endpoint(8080, gone.pid)))
    with pytest.raises(OSError, match="could not forward port 8080"):
        room.start(["/bin/sh", "-c", f"touch {mark}"], cwd=tmp_path, start_new_session=True)
    assert not mark.exists(), "the command ran without its forward"
    assert room.helpers == []


def test_a_server_in_a_room_is_reached_at_its_own_port_from_another_room() -> None:
    in_room = Reach("http://127.0.0.1:41000/mcp", 8123, "/mcp", netns_pid=4242)
    assert in_room.endpoint() == Endpoint(8123, 4242)
    assert in_room.url_in_room() == "http://127.0.0.1:8123/mcp"
    on_host = Reach.of_url("http://127.0.0.1:9000/mcp")
    assert on_host.endpoint() == Endpoint(9000) and on_host.url_in_room() == "http://127.0.0.1:9000/mcp"
