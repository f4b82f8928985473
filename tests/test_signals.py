"""Signals as supervisors send them: SIGINT or SIGTERM to the watcher's main process alone (not its process
group), also when it was started with SIGINT ignored, as `cmd &` from a script and `nohup` start it.

Each long command is caught in a step that would otherwise never end (a child sleeping for an hour: a
declared build step, a server that never answers, an npm install whose download never comes), and each test
first sees that child running, then sends the one signal, and checks the exit status cli.md documents, what
the command says, and that no process it started is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.backtest.helpers import CLOCK_START, SINCE, UNTIL, write_history
from tests.fakes.registry_server import serve_registry
from tests.helpers import ignoring_sigint
from tests.spec.helpers import spec_config
from tests.suites.helpers import CLOSED, CONFORMANCE, ROOT
from watcher.config import load_config
from watcher.core.store import Store
from watcher.suites.worker import queue_for_release

pytestmark = pytest.mark.timeout(300)

MARK = "mcp-watcher-signal-test-child"
"""On the command line of every child these tests make hang: how a test sees that it runs."""
HANG = ["python3", "-c", "import time; time.sleep(3600)", MARK]
STOP_GUARD = 60.0
"""How long a test waits for the watcher to exit after the signal (it exits in seconds; without the handlers
it would wait for the hanging child, an hour)."""


def hanging_server(**overrides: Any) -> dict[str, Any]:
    """A declared build (no SDK install: hermetic) whose `prepare` or `start` may be HANG; its tree is the
    config's folder's `server/` (`write` makes it)."""
    server = {
        "name": "sleepy",
        "team": "books",
        "sdk": "python",
        "language": "other",
        "path": "server",
        "prepare": [["python", "-c", "pass"]],
        "transport": "http",
        "start": ["python3", "-c", "pass"],
        "baseline_sdk_version": "2.3.0",
        "requirements": [],
        "timeouts": {"install": 3600, "start": 3600, "suite": 3600, "snapshot": 3600},
    }
    return {**server, **overrides}


def write(folder: Path, **data: Any) -> Path:
    (folder / "state").mkdir(parents=True, exist_ok=True)
    (folder / "server").mkdir(exist_ok=True)
    (folder / "server" / "README").write_text("a server that takes its time\n")
    config = {
        "state": str(folder / "state" / "watcher.db"),
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": f"{CLOSED}/simple/"}],
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
        "conformance": {"package": CONFORMANCE},
        "suites": {"runs_dir": str(folder / "runs"), "envs_dir": str(folder / "envs")},
        "http": {"enabled": False},
        **data,
    }
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def start(config: Path, *args: str, ignore_sigint: bool, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "watcher.cli", "--config", str(config), *args]
    if ignore_sigint:
        argv = ignoring_sigint(argv)
    child_env = {**os.environ, "MCP_WATCHER_CLOCK_START": CLOCK_START, "PYTHONUNBUFFERED": "1", **(env or {})}
    child_env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))
    # A session of its own: not the test's process group, and the test can always clean up after it.
    return subprocess.Popen(
        argv,
        cwd=config.parent,
        env=child_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def descendants(pid: int) -> dict[int, str]:
    """Every process below `pid` (children, theirs, orphans handed back to it) → its start time."""
    parents: dict[int, int] = {}
    started: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None:
            parents[int(entry)], started[int(entry)] = int(fields[1]), fields[19]
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in found:
                found[child] = started[child]
                frontier.append(child)
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def running(pid: int, started: str) -> bool:
    """True while that process (not a later one with its PID) exists and is not a zombie."""
    fields = _stat(pid)
    return fields is not None and fields[19] == started and fields[0] != "Z"


def wait_for_child(proc: subprocess.Popen[str], needle: str = MARK, timeout: float = 120) -> dict[int, str]:
    """Wait until a process below the watcher has `needle` on its command line; returns all those below it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the watcher exited with {proc.returncode} first:\n{proc.communicate()[1]}"
        below = descendants(proc.pid)
        if any(needle in _cmdline(pid) for pid in below):
            return below
        time.sleep(0.1)
    raise AssertionError(f"no child with {needle!r} on its command line within {timeout} s")


def interrupt(proc: subprocess.Popen[str], sig: signal.Signals) -> tuple[int, str, str]:
    """Send `sig` to the watcher's main process alone; its exit status and output."""
    os.kill(proc.pid, sig)
    try:
        out, err = proc.communicate(timeout=STOP_GUARD)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"still running {STOP_GUARD} s after {sig.name}:\n{err[-3000:]}") from None
    return proc.returncode, out, err


def assert_all_stopped(below: dict[int, str]) -> None:
    left = {pid: _cmdline(pid) for pid, started in below.items() if running(pid, started)}
    for pid in left:  # the test's own clean-up, by PID
        os.kill(pid, signal.SIGKILL)
    assert not left, f"left running after the watcher exited: {left}"


EXPECTED = {signal.SIGINT: 130, signal.SIGTERM: 143}


@pytest.mark.parametrize(
    ("sig", "ignore_sigint"),
    [(signal.SIGINT, True), (signal.SIGTERM, False)],
    ids=["SIGINT-while-ignored-at-start", "SIGTERM"],
)
def test_check_stops_with_its_server_on_a_signal_to_the_main_process(
    tmp_path: Path, sig: signal.Signals, ignore_sigint: bool
):
    config = write(tmp_path, servers=[hanging_server(start=HANG)])
    proc = start(config, "check", "--server", "sleepy", "--sdk-version", "2.4.0b1", ignore_sigint=ignore_sigint)
    below = wait_for_child(proc)
    code, out, err = interrupt(proc, sig)
    assert code == EXPECTED[sig], err
    assert f"mcp-watcher check: interrupted by {sig.name}" in err
    assert "PASS" not in out and "FAIL" not in out
    assert_all_stopped(below)
    assert Store(tmp_path / "state" / "watcher.db").runs() == []  # an interrupted check records nothing


def test_backtest_stops_on_sigterm_and_lists_the_versions_it_did_not_run(tmp_path: Path):
    root = tmp_path / "registry"
    write_history(root)
    with serve_registry(root) as registry:
        config = write(
            tmp_path,
            sdks=[{"name": "python", "registry": "pypi", "package": "mcp", "url": registry.url("pypi/simple")}],
            servers=[hanging_server(prepare=[HANG], baseline_sdk_version="1.27.2")],
        )
        argv = ["backtest", "--server", "sleepy", "--since", SINCE, "--until", UNTIL]
        proc = start(config, *argv, ignore_sigint=False)
        below = wait_for_child(proc)
        code, out, err = interrupt(proc, signal.SIGTERM)
    assert code == 143, err
    assert "No problem appeared" not in out
    assert "This backtest is interrupted after 0 of 5 versions" in out
    assert "not run: 1.27.2, 2.0.0a1, 2.0.0b1, 2.0.0rc1, 2.0.0" in out
    assert "mcp-watcher backtest: interrupted by SIGTERM: run the same command again to continue" in err
    assert_all_stopped(below)


def test_eval_stops_with_its_server_on_sigint_while_sigint_was_ignored_at_start(tmp_path: Path):
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text('tasks:\n  - id: hello\n    prompt: "Say hello."\n    expect: {no_tool: true}\n')
    evaluation = {"tasks": str(tasks), "provider": "anthropic", "model": "m", "api_key_env": "SIGNAL_TEST_KEY"}
    evaluation["api_url"] = CLOSED  # never reached: the servers do not come up
    config = write(tmp_path, servers=[hanging_server(start=HANG, evaluation=evaluation)])
    argv = ["eval", "--server", "sleepy", "--sdk-version", "2.4.0b1"]
    proc = start(config, *argv, ignore_sigint=True, env={"SIGNAL_TEST_KEY": "sk-signal-test"})
    below = wait_for_child(proc)
    code, _, err = interrupt(proc, signal.SIGINT)
    assert code == 130, err
    assert "mcp-watcher eval: interrupted by SIGINT" in err
    assert_all_stopped(below)


def test_run_once_stops_the_queued_run_on_sigterm(tmp_path: Path, world: dict):
    spec = spec_config(world["gh"], teams=[{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}])
    spec["slack"] = {"api_url": world["slack"].api_url, "retries": 0}
    config = write(
        tmp_path,
        **spec,
        sdks=[{"name": "python", "registry": "pypi", "package": "mcp", "url": world["registry"].url("pypi/simple")}],
        servers=[hanging_server(prepare=[HANG])],
    )
    loaded = load_config(config)
    store = Store(loaded.resolve(loaded.config.state))
    assert queue_for_release(loaded, store, "python", "2.4.0b1", prerelease=True) == ["sleepy"]
    store.close()
    proc = start(config, "run", "--once", ignore_sigint=False)
    below = wait_for_child(proc)
    code, _, err = interrupt(proc, signal.SIGTERM)
    assert code == 143, err
    assert "mcp-watcher run --once: interrupted by SIGTERM" in err
    assert_all_stopped(below)


def test_readiness_stops_the_suite_install_on_sigint_while_sigint_was_ignored_at_start(tmp_path: Path):
    root = tmp_path / "registry"
    packument = {
        "name": "@modelcontextprotocol/conformance",
        "dist-tags": {"latest": "9.0.0"},
        "versions": {
            "9.0.0": {
                "name": "@modelcontextprotocol/conformance",
                "version": "9.0.0",
                "dist": {"tarball": "{{BASE}}/tarballs/conformance-9.0.0.tgz", "shasum": "0" * 40},
            }
        },
        "time": {"9.0.0": "2026-11-30T10:00:00.000Z"},
    }
    (root / "@modelcontextprotocol").mkdir(parents=True)
    (root / "@modelcontextprotocol" / "conformance.json").write_text(json.dumps(packument))
    with serve_registry(root) as registry:
        registry.fail("/tarballs/conformance-9.0.0.tgz", hang=True)  # the download never comes
        config = write(
            tmp_path,
            conformance={"package": CONFORMANCE, "npm_registry": registry.base},
            servers=[hanging_server()],
        )
        proc = start(config, "readiness", ignore_sigint=True)
        below = wait_for_child(proc, needle="conformance@9.0.0")
        code, _, err = interrupt(proc, signal.SIGINT)
    assert code == 130, err
    assert "mcp-watcher readiness: interrupted by SIGINT" in err
    assert_all_stopped(below)
    inspected = Store(tmp_path / "state" / "watcher.db").get_kv("readiness:suite-versions") or {}
    assert "9.0.0" not in inspected  # a stopped install is not a broken suite version: the next pass tries it


STUCK = """
import subprocess, sys, threading, time
from watcher.boundary import reaper
from watcher.core import interrupts

interrupts.STOP_CHILDREN_AFTER, interrupts.EXIT_AFTER = 1.0, 3.0
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", sys.argv[1]], start_new_session=True)
reaper.track(child.pid)
with interrupts.handled(force=reaper.stop_all):
    with interrupts.cooperative(threading.Event(), "stuck"):
        print(child.pid, flush=True)
        time.sleep(3600)
"""
"""Work that never looks at its stop event, with a child its stage never stops: only the watchdog ends them."""


@pytest.mark.parametrize("signals", [1, 2], ids=["one-signal-the-watchdog", "a-second-signal"])
def test_work_that_ignores_its_stop_event_still_ends_with_its_children_stopped(tmp_path: Path, signals: int):
    script = tmp_path / "stuck.py"
    script.write_text(STUCK)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(script), MARK], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None and proc.stderr is not None
    child = int(proc.stdout.readline())
    below = descendants(proc.pid)
    assert child in below
    os.kill(proc.pid, signal.SIGTERM)
    assert "SIGTERM received: stopping" in proc.stderr.readline()
    if signals == 2:
        os.kill(proc.pid, signal.SIGTERM)
    code, _, err = interrupt_wait(proc)
    assert code == 143
    assert "stopped by SIGTERM" in err
    assert_all_stopped(below)


def interrupt_wait(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=STOP_GUARD)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"still running {STOP_GUARD} s after the signal:\n{err}") from None
    return proc.returncode, out, err
