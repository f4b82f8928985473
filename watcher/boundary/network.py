"""A room's network, as one parameter, and the relay that forwards one port between namespaces.

Every room has a network namespace of its own with only a loopback device. On top of that, its `Network` is:

- `"none"`: nothing else (a server under test; the watcher reaches an HTTP one through `relay.py`);
- `"registry"`: no route out; the room's 127.0.0.1:3128 leads to the watcher's egress proxy (`proxy.py`), which
  allows only the installers' configured indexes and the file hosts they name (an install);
- `"slirp"`: outbound to every address but the host's loopback, through slirp4netns (`slirp.py`): what installs
  had before the proxy, kept only for the boundary benchmark's side-by-side;
- `Forwarded(port, to)`: no route out, but the room's 127.0.0.1:port leads to one endpoint — the server under
  test, for the conformance suite's room. (An install reaches a registry on the host's loopback through the
  proxy too, as an index written as loopback: its other requests are then refused and recorded.)
"""

from __future__ import annotations

import logging
import os
import select
import subprocess
import sys
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from watcher.boundary.launch import spawn

log = logging.getLogger(__name__)

START_SECONDS = 15.0


@dataclass(frozen=True)
class Endpoint:
    """A TCP port on a loopback: the host's (`netns_pid` None) or a room's (the namespace of that process)."""

    port: int
    netns_pid: int | None = None

    def describe(self) -> str:
        return f"127.0.0.1:{self.port} " + ("on the host" if self.netns_pid is None else "in the server's room")


@dataclass(frozen=True)
class Forwarded:
    """No route out; the room's 127.0.0.1:`port` leads to `to`, and nowhere else."""

    port: int
    to: Endpoint


Network = Literal["none", "registry", "slirp"] | Forwarded


def describe(network: Network) -> str:
    if network == "none":
        return "own loopback only"
    if network == "registry":
        return "no route out; the watcher's egress proxy to the configured indexes only"
    if network == "slirp":
        return "outbound to all but the host's loopback (slirp4netns)"
    assert isinstance(network, Forwarded)
    return f"one forwarded port: 127.0.0.1:{network.port} to {network.to.describe()}"


@dataclass(frozen=True)
class Reach:
    """How an HTTP server under test is reached: the watcher's URL for it on the host (the relay's when it runs
    in a room), its own port and path, and its room's namespace (None: it runs on the host)."""

    url: str
    port: int
    path: str
    netns_pid: int | None = None

    @classmethod
    def of_url(cls, url: str) -> Reach:
        """A server on the host's loopback, known by its URL only."""
        parts = urlsplit(url)
        return cls(url, parts.port or 80, parts.path or "/")

    def endpoint(self) -> Endpoint:
        """Where a forward to the server goes: straight into its room, else to its port on the host."""
        if self.netns_pid is not None:
            return Endpoint(self.port, self.netns_pid)
        return Endpoint(urlsplit(self.url).port or self.port)

    def url_in_room(self) -> str:
        """The URL inside a room that forwards the server's own port to it (the Host header the server expects)."""
        return f"http://127.0.0.1:{self.port}{self.path}"


def start_relay(listen: int | None, to: Endpoint, port: int) -> tuple[subprocess.Popen[bytes], int | None]:
    """Start the relay (`relay.py`): listening on `port` in the namespace of process `listen` (None: the host's,
    where another free port is taken when `port` is not), connecting to `to`. Returns the helper and the port it
    listens on (None when it did not start within START_SECONDS)."""
    command = [sys.executable, "-m", "watcher.boundary.relay", "--listen", _where(listen)]
    command += ["--connect", _where(to.netns_pid), "--port", str(port), "--to-port", str(to.port)]
    helper = spawn(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={"PATH": os.environ.get("PATH", os.defpath), "PYTHONPATH": os.pathsep.join(sys.path)},
        start_new_session=True,
    )
    assert helper.stdout is not None
    ready, _, _ = select.select([helper.stdout], [], [], START_SECONDS)
    line = helper.stdout.readline().decode().strip() if ready else ""
    return helper, int(line) if line.isdigit() else None


def _where(pid: int | None) -> str:
    return "host" if pid is None else str(pid)
