"""Children of a suite run: scrubbed environment, own process group, timeouts, logs on disk.

Every command a run starts (installers, the server under test, the conformance suite, git) goes
through here, so that no secret of the watcher reaches it and nothing outlives its step. Each names
where it runs: a `Launcher`, which is a room (`sandbox.Room`) or the host for a named reason (`launch.Host`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from watcher.boundary import reaper
from watcher.boundary.launch import Launcher
from watcher.boundary.network import Reach
from watcher.core.secret_policy import is_secret, mask

if TYPE_CHECKING:  # the run report's model needs pydantic; this module is loaded without it too
    from watcher.core.run_report import StartPart

# Inherited from the watcher's own environment; everything else is dropped.
BASE_ALLOW = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ")
# Installers also need their own configuration, certificates and proxies.
INSTALLER_ALLOW = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
)
INSTALLER_PREFIXES = ("UV_", "PIP_", "NPM_CONFIG_", "npm_config_")

STOP_GRACE_SECONDS = 5.0
TAIL_LINES = 40


@dataclass(frozen=True)
class ChildEnv:
    env: dict[str, str] = field(repr=False)
    dropped: list[str] = field(default_factory=list)
    """Names asked for (server.env) but refused because they look like secrets."""
    granted: frozenset[str] = frozenset()
    """Names of the secrets granted to this server (env_from, env_files): their values are masked in
    the evidence the watcher reports."""

    def granted_values(self) -> tuple[str, ...]:
        return tuple(self.env[name] for name in self.granted if self.env.get(name))


def scrubbed_env(
    *,
    secret_names: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
    path_prepend: Sequence[str | os.PathLike[str]] = (),
    installer: bool = False,
    tmpdir: str | os.PathLike[str] | None = None,
    source: Mapping[str, str] | None = None,
    granted: Mapping[str, str] | None = None,
) -> ChildEnv:
    """The environment for a child: an allow-list of the parent's, plus `extra`, minus anything secret.

    `granted` holds the secrets named for this server (env_from, env_files): they pass although they
    look secret, but never under one of `secret_names` (the watcher's own)."""
    parent = os.environ if source is None else source
    secrets = set(secret_names)
    env: dict[str, str] = {}
    for name, value in parent.items():
        allowed = name in BASE_ALLOW or (installer and (name in INSTALLER_ALLOW or name.startswith(INSTALLER_PREFIXES)))
        if allowed and name not in secrets and not is_secret(name, value):
            env[name] = value
    dropped: list[str] = []
    for name, value in (extra or {}).items():
        if name in secrets or is_secret(name, value):
            dropped.append(name)
        else:
            env[name] = value
    passed: set[str] = set()
    for name, value in (granted or {}).items():
        if name in secrets:
            dropped.append(name)
        else:
            env[name] = value
            passed.add(name)
    path = [os.fspath(p) for p in path_prepend]
    if env.get("PATH"):
        path.append(env["PATH"])
    env["PATH"] = os.pathsep.join(path) or os.defpath
    if tmpdir is not None:
        env["TMPDIR"] = os.fspath(tmpdir)
    env.setdefault("LANG", "C.UTF-8")
    env["PYTHONUNBUFFERED"] = "1"  # the server's log lines reach the file while it runs
    if not installer:
        # A sealed environment stays as built: no __pycache__ written into it at run time (its digest is checked).
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return ChildEnv(env=env, dropped=sorted(dropped), granted=frozenset(passed))


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last lines of a log file ('' when missing)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def kill_group(proc: subprocess.Popen[bytes], grace: float = STOP_GRACE_SECONDS) -> None:
    """SIGTERM the child's whole process group, then SIGKILL what is left after `grace` seconds."""
    try:
        pgid = os.getpgid(proc.pid)
    except ProcessLookupError:
        pgid = proc.pid
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if proc.poll() is not None and not group_alive(pgid):
                reaper.untrack(proc.pid)
                return
            time.sleep(0.05)
    proc.poll()


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class CommandResult:
    command: list[str]
    returncode: int | None
    seconds: float
    timed_out: bool = False
    cancelled: bool = False
    log: str = ""
    """Path of the combined stdout/stderr log."""
    tail: str = ""
    where: str = ""
    """Where it ran: the room (and its network) or the host, with the reason (`Launcher.describe`)."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.cancelled

    def describe(self) -> str:
        if self.cancelled:
            return "cancelled"
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s"
        return f"exit code {self.returncode}"


def run_command(
    command: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    timeout: float,
    log_path: Path,
    cancel: threading.Event | None = None,
    stdout_path: Path | None = None,
    launcher: Launcher,
) -> CommandResult:
    """Run a command in its own process group; its output goes to `log_path` (stdout apart if asked).
    `launcher` starts it: a room, or the host for the reason it names; whatever the command left
    running is killed when it ends, even processes that left its group (`reaper.sweep`)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    launch = launcher
    result = _run_once(command, cwd, env, timeout, log_path, cancel, stdout_path, launch)
    if not result.ok and not result.cancelled and launch.setup_failed(tail(log_path, 1)):
        # bwrap could not set the room up (a transient kernel answer): that is not the command's doing.
        result = _run_once(command, cwd, env, timeout, log_path, cancel, stdout_path, launch)
    return result


def _run_once(
    command: Sequence[str],
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    timeout: float,
    log_path: Path,
    cancel: threading.Event | None,
    stdout_path: Path | None,
    launch: Launcher,
) -> CommandResult:
    started = time.monotonic()
    mark = reaper.new_mark()
    with open(log_path, "ab") as log, open(stdout_path or os.devnull, "ab") as out:
        try:
            proc = launch.start(
                list(command),
                cwd=os.fspath(cwd),
                env={**env, reaper.MARK_VARIABLE: mark},
                stdin=subprocess.DEVNULL,
                stdout=out if stdout_path else log,
                stderr=log,
                start_new_session=True,
            )
            reaper.track(proc.pid)
        except OSError as exc:
            launch.close()
            log.write(f"cannot start {command[0]}: {exc}\n".encode())
            log.flush()
            return CommandResult(
                list(command), None, 0.0, log=str(log_path), tail=tail(log_path), where=launch.describe()
            )
        timed_out = cancelled = False
        try:
            while proc.poll() is None:
                if cancel is not None and cancel.is_set():
                    cancelled = True
                    break
                if time.monotonic() - started > timeout:
                    timed_out = True
                    break
                time.sleep(0.05)
        finally:
            # The group goes even when the leader exited: grandchildren must not outlive the step.
            seen = reaper.marked(mark)
            kill_group(proc, grace=2.0 if (timed_out or cancelled) else 0.5)
            reaper.sweep(mark, seen=seen, spare=proc.pid)
            launch.close()
    seconds = time.monotonic() - started
    return CommandResult(
        list(command),
        proc.returncode,
        seconds,
        timed_out=timed_out,
        cancelled=cancelled,
        log=str(log_path),
        tail=tail(log_path),
        where=launch.describe(),
    )


# --- the server under test ----------------------------------------------------------------------------


@dataclass
class StartResult:
    ok: bool
    command: list[str]
    transport: str
    url: str | None = None
    port: int | None = None
    pid: int | None = None
    seconds: float = 0.0
    error: str | None = None
    evidence: str = ""
    """The last lines of the server's stderr/stdout when it did not come up."""
    stdout: str = ""
    stderr: str = ""
    dropped_env: list[str] = field(default_factory=list)

    def as_dict(self) -> StartPart:
        return {
            "ok": self.ok,
            "command": self.command,
            "transport": self.transport,
            "url": self.url,
            "pid": self.pid,
            "seconds": round(self.seconds, 2),
            "error": self.error,
            "evidence": self.evidence,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "dropped_env": self.dropped_env,
        }


class ServerProcess:
    """The server under test, started in its own process group with a scrubbed environment.

    Use as a context manager: the whole group is stopped (SIGTERM, then SIGKILL) and the private
    temporary folder removed on exit, whatever happened in between.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        env: ChildEnv,
        log_dir: Path,
        transport: str,
        http_path: str = "/mcp",
        port: int | None = None,
        launcher: Launcher,
    ) -> None:
        self.command = list(command)
        self.launcher = launcher
        self.mark = reaper.new_mark()
        self.host_port = port
        """Where the watcher reaches the server: its own port, or the relay's when it runs in a room."""
        self.cwd = Path(cwd)
        self.child_env = env
        self.log_dir = log_dir
        self.transport = transport
        self.http_path = http_path
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None
        self._tmp: str | None = None
        self.stdout_path = log_dir / "server.stdout.log"
        self.stderr_path = log_dir / "server.stderr.log"

    @property
    def url(self) -> str | None:
        if self.transport != "http" or self.host_port is None:
            return None
        return f"http://127.0.0.1:{self.host_port}{self.http_path}"

    def reach(self) -> Reach | None:
        """How an HTTP server is reached, by the watcher and by a room forwarding its port (None: stdio)."""
        if self.url is None or self.port is None:
            return None
        return Reach(self.url, self.port, self.http_path, self.launcher.netns_pid)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout: float, cancel: threading.Event | None = None) -> StartResult:
        result = self._start(timeout, cancel)
        if not result.ok and self.launcher.setup_failed(tail(self.stderr_path, 1)):
            # bwrap could not set the room up (a transient kernel answer): that is not the server's doing.
            result = self._start(timeout, cancel)
        return result

    def _start(self, timeout: float, cancel: threading.Event | None = None) -> StartResult:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._tmp = tempfile.mkdtemp(prefix="mcp-watcher-server-")
        env = dict(self.child_env.env)
        env["TMPDIR"] = self._tmp
        env[reaper.MARK_VARIABLE] = self.mark
        started = time.monotonic()
        result = StartResult(
            ok=False,
            command=self.command,
            transport=self.transport,
            url=self.url,
            port=self.port,
            dropped_env=self.child_env.dropped,
            stdout=str(self.stdout_path),
            stderr=str(self.stderr_path),
        )
        try:
            with open(self.stdout_path, "ab") as out, open(self.stderr_path, "ab") as err:
                self.proc = self.launcher.start(
                    self.command,
                    cwd=self.cwd,
                    env=env,
                    # A stdio server exits at the end of its input: keep its stdin open while it runs.
                    stdin=subprocess.PIPE if self.transport == "stdio" else subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                )
            reaper.track(self.proc.pid)
        except OSError as exc:
            result.error = f"cannot start {self.command[0]}: {exc}"
            result.seconds = time.monotonic() - started
            return result
        result.pid = self.proc.pid
        if self.port is not None:
            self.host_port = self.launcher.expose(self.port)
            result.url = self.url
        error = self._wait_ready(started, timeout, cancel)
        result.seconds = time.monotonic() - started
        if error:
            result.error = error
            self.stop()
            result.evidence = self.evidence()
            return result
        result.ok = True
        return result

    def _wait_ready(self, started: float, timeout: float, cancel: threading.Event | None) -> str | None:
        assert self.proc is not None
        if self.transport != "http":
            # A stdio server answers only to the client that spawns it; here we only learn whether
            # it survives its imports (the snapshot starts its own copy).
            settle = min(2.0, timeout)
            while time.monotonic() - started < settle:
                if self.proc.poll() is not None:
                    return f"the server exited with code {self.proc.returncode} while starting"
                time.sleep(0.05)
            return None
        assert self.url is not None
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                if cancel is not None and cancel.is_set():
                    return "cancelled"
                if self.proc.poll() is not None:
                    return f"the server exited with code {self.proc.returncode} while starting"
                if time.monotonic() - started > timeout:
                    return f"the server did not answer at {self.url} within {timeout:.0f} s"
                if _answers_mcp(client, self.url):
                    return None
                time.sleep(0.1)

    def evidence(self) -> str:
        parts = []
        for label, path in (("stderr", self.stderr_path), ("stdout", self.stdout_path)):
            text = tail(path)
            if text:
                parts.append(f"--- {label} (last lines) ---\n{text}")
        # A server may print the token it was granted; the evidence goes to reports and Slack.
        return mask("\n".join(parts), self.child_env.granted_values())

    def stop(self) -> None:
        if self.proc is not None:
            seen = reaper.marked(self.mark)
            kill_group(self.proc)
            reaper.sweep(self.mark, seen=seen, spare=self.proc.pid)
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
        self.launcher.close()
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


_PING = {
    "jsonrpc": "2.0",
    "id": "mcp-watcher-ready",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "mcp-watcher-readiness", "version": "0"},
    },
}


def _answers_mcp(client: httpx.Client, url: str) -> bool:
    """True once an HTTP server answers an MCP request at `url` (any HTTP status counts as alive)."""
    try:
        client.post(
            url,
            json=_PING,
            headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"},
        ).close()
    except httpx.HTTPError:
        return False
    return True
