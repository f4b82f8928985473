"""The run boundary: one bubblewrap room around every step that runs untrusted code.

The SDK install (uv / pip / npm), a declared `prepare`, the server under test and the servers `eval`
starts each run in a room that sees:

- the system read-only (/usr and its /bin, /lib links; /etc without its secret files);
- read-only: the interpreter or Node it runs on and the machine's local package indexes (pip's
  `file://` indexes and find-links folders); a Python install also the shared wheel cache (`wheels.py`);
- writable: only the folder of the environment being built (install step); at run time nothing of
  the host — its environment is bound read-only (sealed);
- a private /tmp, which is also its HOME; /proc of its own PID namespace; a minimal /dev.

It never sees the state folder, the config, token files, other servers' checkouts or environments,
the watcher's venv or the home folders. It has its own PID namespace and `--die-with-parent`, so every
process it started dies with it; no capabilities; and when the watcher is root, it runs as uid/gid
65534 (`setpriv` as the room's first command), so root-only files stay closed.

Network (`network.py`, one parameter of a room): the install step gets a network namespace with no route out:
its one way out is a port forwarded to the watcher's egress proxy (`proxy.py`), which allows only the configured
indexes and the file hosts they name, and records every refusal (`egress.py`); a connection straight to an address
or a raw socket is refused and recorded by the room's recorder (`guard.py`, which starts bwrap under a seccomp
filter whose listener it keeps); the server under test gets no
network but its own loopback; the conformance suite's room gets one forwarded port, to the server under test.
The watcher's clients (snapshot, evaluation) reach an HTTP server through `relay.py`, a small forwarder that
joins the room's network namespace — the server itself has no route out.

`suites.sandbox`: `auto` (bubblewrap when `bwrap` works here; where they do not, outside code
is refused), `bubblewrap` (the same, said explicitly: the deploy kit ships it) or `none` (`off` is the same):
the explicit opt-out, outside code runs on the host.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import select
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlparse

from watcher.boundary import egress, guard, proxy, reaper, slirp
from watcher.boundary import network as networks
from watcher.boundary.egress import Mode as EgressMode
from watcher.boundary.launch import Host, HostReason, Launcher, ToolTimeout, run_tool, spawn
from watcher.boundary.network import Forwarded, Network
from watcher.boundary.proxy import EgressProxy, Resolver
from watcher.core import clock
from watcher.core.errors import SuiteError

if TYPE_CHECKING:  # the run report's model needs pydantic; this module is loaded without it too
    from watcher.core.run_report import SandboxPart

log = logging.getLogger(__name__)

Setting = Literal["auto", "bubblewrap", "none", "off"]
OPT_OUT = ("none", "off")
"""The explicit opt-out (`off` is an older spelling of `none`): outside code runs on the host."""


class RoomRefused(SuiteError):
    """Outside code was to run, and the sandbox that `suites.sandbox` asks for cannot be had here."""


# The system, read-only. A top-level link (/bin -> usr/bin on merged-/usr systems) is recreated as a link.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Inside /etc: files no server needs and a root process could read.
ETC_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d")
ETC_SECRET_DIRS = ("/etc/ssh", "/etc/ssl/private", "/etc/mcp-watcher", "/etc/credstore", "/etc/credstore.encrypted")
PROBE_SECONDS = 15.0
SANDBOX_UID = 65534
"""The uid and gid a room runs as when the watcher is root ("nobody" on Debian)."""
START_SECONDS = 15.0


@dataclass(frozen=True)
class Sandbox:
    """The protection suite runs get here: bubblewrap, or none (with the reason)."""

    mode: Literal["bubblewrap", "off"]
    reason: str
    bwrap: str | None = None
    isolated_network: bool = False
    """True when bwrap can give a room a network namespace of its own (always so when active)."""
    refused: bool = False
    """A room was asked for (`auto` or `bubblewrap`) but cannot be made here: outside code is refused (runs are
    errors), never run without one. Only `none` runs it on the host."""
    slirp: str | None = None
    """slirp4netns, when installed: only the "slirp" network (the benchmark's comparison) uses it."""
    egress: EgressMode = "block"
    """`suites.egress`: what an install room's proxy does with a request off its allow-list (`egress.py`)."""
    index_sources: Callable[[], Sequence[str]] = tuple
    """The installers' default indexes and the SDK sources the config names (the caller's: `suites.build.indexes`)."""
    resolver: Resolver = proxy.system_resolver
    """How the proxy looks names up (tests give it a resolver of their own)."""
    record_direct: bool = True
    """An install room's direct connections and raw sockets are recorded (`guard.py`) where this machine allows
    it (False: the benchmark's comparison with the way before the recorder)."""

    @property
    def active(self) -> bool:
        return self.mode == "bubblewrap" and self.bwrap is not None

    def to_json(self) -> SandboxPart:
        return {
            "mode": self.mode,
            "reason": self.reason,
            "network": self.network_note() if self.active else "shared with the watcher",
            "user": self.user_note() if self.active else "the watcher's",
            "refused": self.refused,
        }

    def network_note(self) -> str:
        return (
            f"install: no route out, only the watcher's proxy to the configured indexes (egress: {self.egress}), "
            f"{self.recorder_note()}; "
            "run: own loopback only; "
            "conformance suite: one forwarded port, to the server under test"
        )

    def recorder(self) -> bool:
        """Whether install rooms get the recorder of direct connections and raw sockets (`guard.py`)."""
        return self.record_direct and guard.problem() is None

    def recorder_note(self) -> str:
        if self.recorder():
            return "direct connections and raw sockets refused and recorded"
        why = guard.problem() if self.record_direct else "the recorder is off"
        return f"direct connections and raw sockets refused by the kernel, not recorded ({why})"

    def user_note(self) -> str:
        if os.geteuid() == 0:
            return f"uid/gid {SANDBOX_UID} (the watcher is root), no capabilities"
        return "the watcher's uid in its own user namespace, no capabilities"

    def describe(self) -> str:
        if self.active:
            return f"bubblewrap ({self.reason}); network: {self.network_note()}; user: {self.user_note()}"
        return f"{'REFUSED' if self.refused else 'off'}: {self.reason}"

    def wrap(
        self,
        command: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        readable: Iterable[str | os.PathLike[str]],
        writable: Iterable[str | os.PathLike[str]] = (),
        hidden: Iterable[str | os.PathLike[str]] = (),
        resolv_conf: str | None = None,
        extra: Sequence[str] = (),
        protected: Iterable[str | os.PathLike[str]] = (),
    ) -> list[str]:
        """`command` inside a room with no network but its own loopback (unchanged when there is none).
        `readable` folders are bound read-only, `writable` ones read-write, `hidden` paths inside them masked;
        `protected` files inside a writable folder (the watcher's own log there) stay read-only and in place.
        RoomRefused when a room was asked for and cannot be had: the command is never handed back bare."""
        if self.refused:
            raise RoomRefused(self.reason)
        if not self.active:
            return list(command)
        assert self.bwrap is not None
        root = os.geteuid() == 0
        args = [self.bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc"]
        args += ["--unshare-uts", "--unshare-net", "--unshare-cgroup-try"]
        if not root:
            # Unprivileged bwrap makes a user namespace anyway; inside it, drop what it grants.
            args += ["--unshare-user", "--cap-drop", "ALL"]
        args += _system_binds()
        if resolv_conf is not None:
            args += ["--ro-bind", resolv_conf, "/etc/resolv.conf"]
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        rw = _outermost(Path(p).resolve() for p in writable)
        ro = [p for p in _outermost(Path(p).resolve() for p in readable) if not any(p.is_relative_to(w) for w in rw)]
        for path in ro:
            args += ["--ro-bind", str(path), str(path)]
        for path in rw:
            args += ["--bind", str(path), str(path)]
        bound = [*ro, *rw]
        for path in (Path(p) for p in protected):
            if path.is_file() and not path.is_symlink():
                args += ["--ro-bind", str(path), str(path)]
        for path in (Path(p) for p in hidden):
            if any(_inside(path, b) for b in bound) and path.exists():
                args += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
        # bwrap copies the host's modes for the folders it makes on the way to a bind (/root is 0700):
        # open them inside the room so the unprivileged user can reach what is bound.
        for parent in _made_parents(bound):
            args += ["--chmod", "0755", str(parent)]
        args += ["--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--chdir", str(Path(cwd).resolve())]
        args += list(extra)
        inner = list(command)
        if root:
            inner = [*drop_privileges(), *inner]
        return [*args, "--", *inner]

    def room(
        self,
        *,
        readable: Iterable[str | os.PathLike[str]],
        writable: Iterable[str | os.PathLike[str]] = (),
        hidden: Iterable[str | os.PathLike[str]] = (),
        network: Network = "none",
        protected: Iterable[str | os.PathLike[str]] = (),
        audit_as: tuple[str, str] = ("", ""),
        learn_from: Sequence[str] = (),
    ) -> Launcher:
        """How a step that runs outside code is started: inside a room when the sandbox is active, on the host
        under `suites.sandbox: none`; RoomRefused when a room was asked for and cannot be had."""
        if self.refused:
            raise RoomRefused(self.reason)
        if not self.active:
            return Host(HostReason.OPTED_OUT)
        room = Room(self, tuple(readable), tuple(writable), tuple(hidden), network, tuple(protected), label=audit_as)
        room.learn_from = tuple(learn_from)
        return room

    def hand_over(self, folder: Path) -> None:
        """Let the room's user write `folder` (the environment being built): chown to it when we are root."""
        if self.active and os.geteuid() == 0:
            _chown_tree(folder, SANDBOX_UID, SANDBOX_UID)


def drop_privileges() -> list[str]:
    """The room's first command when the watcher is root: uid/gid 65534, no groups, no capabilities."""
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    return [
        setpriv,
        f"--reuid={SANDBOX_UID}",
        f"--regid={SANDBOX_UID}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


def _chown_tree(folder: Path, uid: int, gid: int) -> None:
    for dirpath, dirnames, filenames in os.walk(folder):
        os.chown(dirpath, uid, gid, follow_symlinks=False)
        for name in [*dirnames, *filenames]:
            with contextlib.suppress(FileNotFoundError):
                os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)


@dataclass
class Room(Launcher):
    """One bubblewrap room for one step: its own namespaces, and its network (`network.py`): for an install, the
    relay's one port to the watcher's egress proxy (started with the room, stopped with it), or one port
    forwarded by the relay."""

    sandbox: Sandbox
    readable: tuple[str | os.PathLike[str], ...]
    writable: tuple[str | os.PathLike[str], ...]
    hidden: tuple[str | os.PathLike[str], ...]
    network: Network
    protected: tuple[str | os.PathLike[str], ...] = ()
    helpers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    label: tuple[str, str] = ("", "")
    """The (server, step) an install room's egress refusals are recorded under."""
    learn_from: tuple[str, ...] = ()
    """The SDK's pages on the indexes: read by the proxy, before the first tunnel to each, for their file hosts."""
    refused: list[egress.Refusal] = field(default_factory=list)
    """What the room's proxy refused (or, under `audit`, let through) over every start."""
    failed: list[str] = field(default_factory=list)
    """Allowed requests of the room's proxy that failed, with their cause, over every start."""
    direct: list[egress.Refusal] = field(default_factory=list)
    """The direct connections and raw sockets the room's recorder refused (`guard.py`), over every start."""
    _resolv: str | None = None
    _proxy: EgressProxy | None = None
    _readers: list[threading.Thread] = field(default_factory=list)
    _direct_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def describe(self) -> str:
        return f"bubblewrap room (network: {networks.describe(self.network)})"

    def start(self, command: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
        """Start `command` in the room. The room waits (`--block-fd`) until its network is ready; a forward
        that cannot be made is an OSError (the room is stopped first), never a command started without it."""
        cwd = popen.get("cwd") or os.getcwd()
        info_r, info_w = os.pipe()
        block_r, block_w = os.pipe()
        if self.network in ("registry", "slirp"):  # the proxy resolves names itself: the room gets no DNS
            self._resolv = slirp.resolv_file(slirp.SLIRP_DNS if self.network == "slirp" else None)
        if self.network == "registry":
            popen["env"] = {**(popen.get("env") or os.environ), **proxy.room_env()}
            self._proxy = self._start_proxy(popen["env"])
        extra = ["--info-fd", str(info_w), "--block-fd", str(block_r)]
        argv = self.sandbox.wrap(
            command,
            cwd=cwd,
            readable=self.readable,
            writable=self.writable,
            hidden=self.hidden,
            resolv_conf=self._resolv,
            extra=extra,
            protected=self.protected,
        )
        passed = tuple(popen.pop("pass_fds", ())) + (info_w, block_r)
        report_w = None
        if self.network == "registry" and self.sandbox.recorder():
            report_r, report_w = os.pipe()  # the recorder's reports: the room never holds this pipe
            argv, passed = guard.command(argv, report_w), (*passed, report_w)
            self._readers.append(guard.read_reports(report_r, self._record))
        try:
            proc = spawn(argv, pass_fds=passed, **popen)
        finally:
            os.close(info_w)
            os.close(block_r)
            if report_w is not None:
                os.close(report_w)
        try:
            info = _read_info(info_r)
            self.netns_pid = int(info["child-pid"]) if info else None
            if self.network == "slirp" and self.netns_pid is not None and self.sandbox.slirp is not None:
                self.helpers.append(slirp.link(self.sandbox.slirp, self.netns_pid))
            elif self._proxy is not None and self.netns_pid is not None:
                self._forward(self.netns_pid, Forwarded(proxy.ROOM_PORT, networks.Endpoint(self._proxy.port)))
            elif isinstance(self.network, Forwarded) and self.netns_pid is not None:
                self._forward(self.netns_pid, self.network)
        except OSError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()  # --die-with-parent: the room's processes end with bwrap
            proc.wait()
            os.close(block_w)
            os.close(info_r)
            self.close()
            raise
        os.close(info_r)
        # Releases the command (it waits on --block-fd until the room's network is ready).
        with contextlib.suppress(OSError):
            os.write(block_w, b"1")
        os.close(block_w)
        return proc

    def _start_proxy(self, env: Mapping[str, str]) -> EgressProxy:
        """The room's one way out: a proxy of the watcher's allowing the installers' configured indexes."""
        indexes = egress.configured_indexes({**os.environ, **env}, defaults=self.sandbox.index_sources())
        policy = egress.Policy(indexes, self.sandbox.egress, server=self.label[0], step=self.label[1])
        started = EgressProxy(policy, resolver=self.sandbox.resolver, learn_urls=self.learn_from)
        started.start()
        return started

    def _record(self, attempt: dict[str, object]) -> None:
        """One attempt the recorder refused, under the room's server and step, at the watcher's time."""
        if "unrecorded" in attempt or "dropped" in attempt:
            log.warning("the install room's recorder: %s", attempt)
            return
        refusal = egress.Refusal(
            str(attempt.get("host", "")),
            int(str(attempt.get("port") or 0)),
            str(attempt.get("address", "")),
            str(attempt.get("rule", "")),
            self.label[1],
            self.label[0],
            clock.now().isoformat(timespec="seconds"),
            kind=str(attempt.get("kind", "direct")),
        )
        with self._direct_lock:
            self.direct.append(refusal)

    def refusals(self) -> list[egress.Refusal]:
        with self._direct_lock:
            direct = list(self.direct)
        return [*self.refused, *(self._proxy.policy.taken() if self._proxy else []), *direct]

    def egress_failures(self) -> list[str]:
        return [*self.failed, *(self._proxy.policy.failures if self._proxy else [])]

    def _forward(self, pid: int, forwarded: Forwarded) -> None:
        """The room's 127.0.0.1:port, forwarded by the relay (listening in the room, connecting to its target)."""
        helper, port = networks.start_relay(pid, forwarded.to, forwarded.port)
        self.helpers.append(helper)
        if port != forwarded.port:
            raise OSError(f"the relay could not forward port {forwarded.port} into the room")

    def setup_failed(self, last_line: str) -> bool:
        # e.g. "bwrap: loopback: Failed RTM_NEWADDR: No child processes", seen now and then under load.
        return last_line.startswith("bwrap: ")

    def expose(self, port: int) -> int:
        """Start the relay into the room's network namespace; returns its port on the host's loopback."""
        if self.netns_pid is None:
            return port
        helper, host_port = networks.start_relay(None, networks.Endpoint(port, self.netns_pid), port)
        self.helpers.append(helper)
        if host_port is None:
            log.warning("the relay into the server's network namespace did not start")
            return port
        return host_port

    def close(self) -> None:
        for helper in self.helpers:
            with contextlib.suppress(ProcessLookupError):
                helper.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                helper.wait(timeout=5)
            for stream in (helper.stdin, helper.stdout):
                _close(stream)
        self.helpers.clear()
        for reader in self._readers:  # the recorder ended with the room: its last reports are read
            reader.join(timeout=START_SECONDS)
        self._readers.clear()
        if self._proxy is not None:
            self.refused += self._proxy.policy.taken()
            self.failed += self._proxy.policy.failures
            self._proxy.close()
            self._proxy = None
        reaper.reap_rooms()  # the room's first process, handed to us when bwrap exits
        if self._resolv:
            with contextlib.suppress(OSError):
                os.unlink(self._resolv)
            self._resolv = None


def _close(stream: IO[bytes] | None) -> None:
    if stream is not None:
        with contextlib.suppress(OSError):
            stream.close()


def _read_info(fd: int) -> dict[str, Any] | None:
    """bwrap's --info-fd JSON (the room's first process, as the host sees it); None when bwrap failed."""
    data = b""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
        with contextlib.suppress(ValueError):
            parsed = json.loads(data)
            return parsed if isinstance(parsed, dict) else None
    return None


def _system_binds() -> list[str]:
    args: list[str] = []
    for folder in SYSTEM_DIRS:
        path = Path(folder)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), folder]
        elif path.is_dir():
            args += ["--ro-bind", folder, folder]
    for secret in ETC_SECRETS:
        if Path(secret).is_file():
            args += ["--ro-bind", "/dev/null", secret]
        elif Path(secret).is_dir():
            args += ["--tmpfs", secret]
    for secret_dir in ETC_SECRET_DIRS:
        if Path(secret_dir).is_dir():
            args += ["--tmpfs", secret_dir]
    return args


def _made_parents(bound: Sequence[Path]) -> list[Path]:
    """The folders bwrap makes on the way to the binds (not the system's, not inside another bind)."""
    system = [Path(s) for s in SYSTEM_DIRS]
    parents: set[Path] = set()
    for path in bound:
        for parent in path.parents:
            if parent == Path("/") or parent == Path("/tmp"):
                continue
            if any(parent.is_relative_to(s) for s in system) or any(parent.is_relative_to(b) for b in bound):
                continue
            parents.add(parent)
    return sorted(parents, key=lambda p: len(p.parts))


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder)


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """Folders to bind, without those inside another one (and without the system, bound already)."""
    chosen: list[Path] = []
    for path in sorted(set(paths), key=lambda p: len(p.parts)):
        inside_system = any(path.is_relative_to(s) for s in ("/usr", "/etc"))
        if path.exists() and not inside_system and not any(path.is_relative_to(c) for c in chosen):
            chosen.append(path)
    return chosen


def local_package_sources() -> list[Path]:
    """The machine's local package indexes, which an install must be able to read: pip's `file://`
    index URLs, its find-links folders and constraint files (from PIP_* variables and pip.conf files)."""
    values: list[str] = []
    for name in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONSTRAINT", "UV_FIND_LINKS"):
        values += os.environ.get(name, "").split()
    files = [os.environ.get("PIP_CONFIG_FILE", ""), "/etc/pip.conf", "/etc/xdg/pip/pip.conf"]
    values += egress.pip_conf_values(files, ("index-url", "extra-index-url", "find-links", "constraint"))
    out: list[Path] = []
    for value in values:
        parsed = urlparse(value)
        if parsed.scheme == "file":
            path = Path(unquote(parsed.path))
        elif not parsed.scheme and value.startswith("/"):
            path = Path(value)
        else:
            continue
        if path.exists() and path not in out:
            out.append(path)
    return out


def _run_probe(command: list[str]) -> str | None:
    """None when the command ran; else why not (its last line of output)."""
    try:
        env = {"PATH": os.environ.get("PATH", os.defpath)}
        done = run_tool(command, why=HostReason.HELPER, env=env, timeout=PROBE_SECONDS)
    except (OSError, ToolTimeout) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    last = (done.stderr or done.stdout).strip().splitlines()
    return last[-1] if last else f"exit code {done.returncode}"


@functools.cache
def probe(bwrap: str) -> tuple[str | None, bool]:
    """(why bwrap cannot make a room here, or None; whether it can unshare the network)."""
    trial = Sandbox("bubblewrap", "probe", bwrap=bwrap)
    problem = _run_probe(trial.wrap(["true"], cwd="/", readable=()))
    return problem, problem is None


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def find_slirp() -> str | None:
    return shutil.which("slirp4netns")


def choose(setting: Setting, *, announce: bool = True) -> Sandbox:
    """The sandbox `suites.sandbox` asks for, as far as this machine allows. Only the explicit opt-out (`none`,
    or `off`) runs outside code on the host; `auto` and `bubblewrap` without a working bwrap refuse it. The
    refusal is logged once per process (`announce=False`: the caller says it, and it is not said again)."""
    if setting in OPT_OUT:
        return Sandbox("off", f"suites.sandbox is {setting}")
    bwrap = find_bwrap()
    slirp = find_slirp()
    problem, network = probe(bwrap) if bwrap else ("bwrap is not installed (Debian package bubblewrap)", False)
    if problem is None and bwrap:
        return Sandbox("bubblewrap", bwrap, bwrap=bwrap, isolated_network=network, slirp=slirp)
    if setting == "bubblewrap":
        return Sandbox("off", f"suites.sandbox is bubblewrap, but it cannot run here: {problem}", refused=True)
    reason = (
        f"suites.sandbox is auto, but bubblewrap cannot run here ({problem}): outside code is refused; "
        "set suites.sandbox: none to run it without a sandbox"
    )
    _warn_once(reason, announce)
    return Sandbox("off", reason, refused=True)


_warned: set[str] = set()


def _warn_once(text: str, announce: bool = True) -> None:
    """Each run asks for its boundary: a machine without one is said once per process, not once per run."""
    if text not in _warned:
        _warned.add(text)
        if announce:
            log.warning("%s", text)


def self_check(setting: Setting) -> dict[str, object]:
    """The boundary this process gives runs, for the start-up log, `status` and `/readyz`:
    `ok` is False when a room is asked for (`auto`, `bubblewrap`) and cannot be had (runs are refused)."""
    chosen = choose(setting, announce=False)  # the caller says it (the start-up log, status, /readyz)
    return {**chosen.to_json(), "setting": setting, "ok": not chosen.refused, "text": chosen.describe()}
