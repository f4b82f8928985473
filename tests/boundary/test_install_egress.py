"""A hostile sdist installed by real pip in an install room whose only way out is the egress proxy, as root and
as an unprivileged uid (fixtures/egress_scene.py): its setup.py asks for the metadata address, a private address
(by address, and by an index's name rebound to it), an outside name (through the proxy and by DNS), a loopback
port that is no index (through the proxy and directly) and a raw socket. Each is refused; the proxy's ones, the
direct connection to the metadata address and the raw socket are recorded with the server and step (the last two
by the room's recorder, `watcher/boundary/guard.py`, with their kind), and the same install reaches its index and
the file host the index's page names, and completes. No packet leaves loopback: the proxy refuses before it
connects, the recorder before the kernel is asked (and the room has no route), and the scene's own resolver
answers every name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from watcher.boundary import sandbox

SCENE = Path(__file__).resolve().parent / "fixtures" / "egress_scene.py"
SYSTEM_PYTHON = "/usr/bin/python3"
NOBODY = 65534

pytestmark = [
    pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason="no system Python at /usr/bin/python3"),
    pytest.mark.timeout(900),
]

REFUSED = {
    ("169.254.169.254", 80, "", "not_an_index"),
    ("10.0.0.5", 443, "", "not_an_index"),
    ("rebound.test", 8080, "10.0.0.5", "private_network"),
    ("exfil.example", 80, "", "not_an_index"),
}
"""What the proxy records, besides the loopback port that is no index (its number is the scene's)."""
RECORDED = {
    ("169.254.169.254", 80, "169.254.169.254", "direct_connect", "direct"),
    ("raw socket", 0, "AF_INET SOCK_RAW, protocol 1", "raw_socket", "raw"),
}
"""What the room's recorder records: the direct connection to the metadata address and the raw ICMP socket."""
SITE = sysconfig.get_paths()["purelib"]
"""The test venv's packages: where the scene's recorder finds its seccomp binding (the system Python has none)."""


def _boundary_problem() -> str | None:
    chosen = sandbox.choose("bubblewrap")
    return None if chosen.active else chosen.reason


def _check(scene: dict[str, object]) -> None:
    if "skip" in scene:
        pytest.skip(f"the run boundary cannot be had here: {scene['skip']}")
    # First: the hostile code ran (its mark, read back), and reported each attempt.
    assert scene["mark"] == "the hostile setup.py ran", scene["pip_log"]
    attack = scene["attack"]
    assert isinstance(attack, dict), scene["pip_log"]
    assert all(outcome.startswith("STOPPED") for outcome in attack.values()), attack
    assert "403" in attack["metadata"] and "403" in attack["private"] and "403" in attack["private_by_name"]
    assert "403" in attack["outside_name"] and "403" in attack["loopback_port"]
    assert "Network is unreachable" in attack["metadata_direct"]  # no route: nothing was sent
    assert "gaierror" in attack["outside_dns"]  # no DNS in the room
    assert "ConnectionRefused" in attack["loopback_direct"]  # the room's own loopback, not the host's
    assert "PermissionError" in attack["raw_socket"]  # no CAP_NET_RAW
    # Then: the proxy refused and recorded each of its ones, under the install's server and step...
    refusals = scene["refusals"]
    assert isinstance(refusals, list)
    assert scene["recorder"] == "direct connections and raw sockets refused and recorded", scene["recorder"]
    proxied = [r for r in refusals if r["kind"] == "proxy"]
    seen = {(r["host"], r["port"], r["address"], r["rule"]) for r in proxied}
    loopback = {item for item in seen if item[0] == "127.0.0.1"}
    assert seen - loopback == REFUSED, refusals
    assert len(loopback) == 1 and next(iter(loopback))[3] == "not_an_index", refusals
    # ...and the room's recorder the direct connection and the raw socket, before the kernel was asked (as often as
    # pip ran the setup.py: its metadata, then its wheel)...
    direct = [(r["host"], r["port"], r["address"], r["rule"], r["kind"]) for r in refusals if r["kind"] != "proxy"]
    runs = len(proxied) // len(seen)  # every attempt is made, and refused, on each run
    assert set(direct) == RECORDED and len(direct) == len(RECORDED) * runs, refusals
    assert all(r["server"] == "hostile" and r["step"] == "pip install" and not r["let_through"] for r in refusals)
    assert scene["other_hits"] == 0, "the loopback service that is no index was reached"
    # ...and the same install reached its index and the file host the index's page named, and completed.
    assert scene["index_requests"] == ["index /simple/evil-helper/", "files /files/evil_helper-0.1.tar.gz"]
    assert scene["pip_exit"] == 0 and scene["installed"], scene["pip_log"]


def test_a_hostile_install_reaches_only_its_index_and_every_other_way_out_is_refused_and_recorded(
    tmp_path: Path,
) -> None:
    problem = _boundary_problem()
    if problem:
        pytest.skip(f"the run boundary cannot be had here: {problem}")
    folder = tmp_path / "scene"
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, str(SCENE), str(folder), SITE], capture_output=True, text=True, timeout=800, check=False
    )
    assert done.returncode == 0, done.stderr
    scene = json.loads(done.stdout)
    assert scene["uid"] == os.geteuid()
    _check(scene)


@pytest.mark.skipif(os.geteuid() != 0, reason="the test above already runs unprivileged")
def test_the_same_holds_for_an_unprivileged_watcher_with_no_tun_device_and_no_capability() -> None:
    setpriv = shutil.which("setpriv")
    if setpriv is None or _boundary_problem():
        pytest.skip("needs setpriv and a working bwrap")
    if any(os.stat(p).st_mode & 0o005 != 0o005 for p in SCENE.parents[:4]):
        pytest.skip(f"the checkout is not readable by uid {NOBODY}")
    folder = Path(tempfile.mkdtemp(prefix="mcp-watcher-egress-"))  # pytest's folders are root's, mode 0700
    os.chown(folder, NOBODY, NOBODY)
    try:
        done = subprocess.run(
            [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]
            + ["--bounding-set=-all", "--", SYSTEM_PYTHON, str(SCENE), str(folder), SITE],
            capture_output=True,
            text=True,
            timeout=800,
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
