"""The open way out a room had before the egress proxy: slirp4netns, outbound to every address but the host's
loopback. Kept as the `Network` value "slirp" for the boundary benchmark's side-by-side (`bench_boundary.py`);
no step of the watcher asks for it (an install room's network is "registry": the proxy only)."""

from __future__ import annotations

import logging
import os
import select
import subprocess
import tempfile
import time
from pathlib import Path

from watcher.boundary import relay
from watcher.boundary.launch import spawn

log = logging.getLogger(__name__)

SLIRP_DNS = "10.0.2.3"
"""slirp4netns's built-in resolver: the room's resolv.conf names it (the host's may be on 127.0.0.1)."""
START_SECONDS = 15.0


def resolv_file(nameserver: str | None = SLIRP_DNS) -> str:
    """A resolv.conf for a room: slirp4netns's resolver, or (None) no server at all (the proxy resolves)."""
    handle, path = tempfile.mkstemp(prefix="mcp-watcher-resolv-")
    with os.fdopen(handle, "w") as out:
        out.write(f"nameserver {nameserver}\n" if nameserver else "# no DNS in this room: the proxy resolves\n")
    os.chmod(path, 0o644)
    return path


def link(slirp: str, pid: int) -> subprocess.Popen[bytes]:
    """Give the room's network namespace a way out through slirp4netns, without the host's loopback."""
    wait_loopback(pid)
    ready_r, ready_w = os.pipe()
    command = [slirp, "--configure", "--mtu=65520", "--disable-host-loopback", "--ready-fd", str(ready_w)]
    passed = [ready_w]
    if os.geteuid() != 0:
        # The user namespace that owns the room's network (not the room's own: bwrap nests that one).
        net = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        try:
            passed.append(relay.owner_userns(net))
        finally:
            os.close(net)
        command += ["--userns-path", f"/proc/self/fd/{passed[-1]}"]
    command += [str(pid), "tap0"]
    try:
        helper = spawn(
            command,
            pass_fds=passed,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    finally:
        for fd in passed:
            os.close(fd)
    ready, _, _ = select.select([ready_r], [], [], START_SECONDS)
    said = os.read(ready_r, 1) if ready else b""
    os.close(ready_r)
    if not ready:
        log.warning("slirp4netns was not ready within %.0f s; the install may have no network", START_SECONDS)
    elif not said:  # it ended without configuring the room: say so rather than let the install time out
        log.warning("slirp4netns ended before the room's network was up (exit %s)", helper.wait(5))
    return helper


def wait_loopback(pid: int, seconds: float = 3.0) -> None:
    """Wait until bwrap has brought the room's loopback up: slirp4netns configuring the namespace at the
    same moment makes bwrap's own set-up fail ("loopback: Failed RTM_NEWADDR"). The kernel adds ::1 to
    `lo` when it goes up, so its line in the namespace's if_inet6 is the sign (without IPv6: a short wait)."""
    table = Path(f"/proc/{pid}/net/if_inet6")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if any(line.split()[-1:] == ["lo"] for line in table.read_text().splitlines()):
                return
        except FileNotFoundError:
            if not Path(f"/proc/{pid}").exists():
                return  # the room is gone already
            time.sleep(0.2)  # no IPv6 here: give bwrap a moment
            return
        except OSError:
            return
        time.sleep(0.005)
