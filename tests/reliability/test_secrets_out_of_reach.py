"""Class 4: the watcher's secrets are out of reach of the code under test.

A server under test (tests/suites/fixtures/hunter_server) hunts for the tokens: its own environment,
every /proc/*/environ it can read, its parent's, the token file and the state database. The watcher
runs as its own process (`mcp-watcher check`), started with the tokens in its real environment, so
/proc/<watcher pid>/environ would show them unless the watcher scrubs them.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import skip_unless_ci
from tests.suites.helpers import ROOT, fixture_server, write_config
from watcher.boundary import sandbox

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("secrets-out-of-reach"), pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hunter-envs")


def _tokens() -> dict[str, str]:
    return {
        "SLACK_BOT_TOKEN": "xoxb-hunt-" + secrets.token_hex(8),
        "GITHUB_TOKEN": "ghp_" + secrets.token_hex(12),
        "MCP_WATCHER_PAGE_TOKEN": "page-" + secrets.token_hex(8),
        "OTHER_DB_PASSWORD": "other-" + secrets.token_hex(8),  # granted to the other server only
    }


def _hunt(tmp_path: Path, envs: Path, mode: str, transport: str, hunt_files: bool) -> tuple[dict[str, Any], str, dict]:
    tokens = _tokens()
    token_file = tmp_path / "slack-webhook"
    tokens["file"] = "https://example.invalid/webhook-" + secrets.token_hex(8)
    token_file.write_text(tokens["file"], encoding="utf-8")
    state = tmp_path / "state" / "watcher.db"
    state.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(state) as db:  # a state database that holds a secret-looking value
        db.execute("create table t (v text)")
        db.execute("insert into t values (?)", (tokens["SLACK_BOT_TOKEN"],))
    start = ["python", "-m", "hunter_server"] + (["--port", "{port}"] if transport == "http" else [])
    hunter = fixture_server(
        "hunter",
        "hunter_server",
        start,
        transport=transport,
        env={"HUNT_FILES": os.pathsep.join([str(token_file), str(state)]) if hunt_files else ""},
    )
    other = fixture_server("other", "hunter_server", start, env_from=["OTHER_DB_PASSWORD"])
    loaded = write_config(tmp_path, [hunter, other], envs, sandbox=mode)
    data = loaded.path.read_text(encoding="utf-8")
    loaded.path.write_text(data + f"slack:\n  webhook_env: null\n  webhook_file: {token_file}\n", encoding="utf-8")
    env = {**os.environ, **{k: v for k, v in tokens.items() if k.isupper()}}
    done = subprocess.run(
        [sys.executable, "-c", "from watcher.cli import main; raise SystemExit(main())"]
        + ["--config", str(loaded.path), "check", "--server", "hunter", "--sdk-version", "2.3.0", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.stdout.strip(), done.stderr
    report = json.loads(done.stdout)
    for token in tokens.values():
        assert token not in done.stdout + done.stderr
    lines = [
        line
        for log in Path(report["run_dir"]).glob("server.stderr.log")
        for line in log.read_text(encoding="utf-8").splitlines()
        if line.startswith("HUNT-REPORT ")
    ]
    assert lines, f"the hunter did not run: {report['start']}"
    return report, lines[-1], tokens


def _bwrap_problem() -> str | None:
    bwrap = sandbox.find_bwrap()
    if bwrap is None:
        return "bwrap is not installed (scripts/test installs Debian's bubblewrap when run as root)"
    return sandbox.probe(bwrap)[0]


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_sandboxed_server_finds_no_secret_anywhere(tmp_path: Path, envs: Path, transport: str):
    problem = _bwrap_problem()
    if problem:
        skip_unless_ci(f"bubblewrap cannot run here: {problem}")
    report, line, tokens = _hunt(tmp_path, envs, "bubblewrap", transport, hunt_files=True)
    assert report["sandbox"]["mode"] == "bubblewrap" and not report["sandbox"]["refused"]
    found = json.loads(line.removeprefix("HUNT-REPORT "))
    for name, token in tokens.items():
        assert token not in line, f"the server under test found {name}"
    # It looked: its own namespace's processes only (the watcher is not among them), no secret file, no state.
    assert found["proc_environ"] and all(int(pid) < 10 for pid in found["proc_environ"])
    assert all(text.startswith("<unreadable") for text in found["files"].values()), found["files"]
    assert len(found["files"]) == 2
    assert report["start"]["ok"], report["start"]
    assert report["verdict"] == "pass", report["reasons"]


def test_without_a_sandbox_no_process_environment_shows_a_secret(tmp_path: Path, envs: Path):
    """Non-dumpable and the scrubbed environment block hold even without bubblewrap."""
    report, line, tokens = _hunt(tmp_path, envs, "off", "http", hunt_files=False)
    assert report["sandbox"] == {
        "mode": "off",
        "reason": "suites.sandbox is off",
        "network": "shared with the watcher",
        "user": "the watcher's",
        "refused": False,
    }
    assert report["protection"]["non_dumpable"] is True
    assert report["protection"]["environ_block_scrubbed"] is True
    assert set(report["protection"]["secrets_removed_from_environment"]) >= {
        "SLACK_BOT_TOKEN",
        "GITHUB_TOKEN",
        "MCP_WATCHER_PAGE_TOKEN",
    }
    found = json.loads(line.removeprefix("HUNT-REPORT "))
    watcher_pid = str(found["parent_pid"])
    assert watcher_pid in found["proc_environ"]  # it did look at the watcher's environment
    for name, token in tokens.items():
        if name != "file":  # without the sandbox the token file is reachable: documented in docs/reliability.md
            assert token not in line, f"the server under test found {name}"
    assert report["verdict"] == "pass", report["reasons"]


_SEALED_CHILD = """
import ctypes, os, sys, time
sys.path.insert(0, {root!r})
from watcher.core import vault
protection = vault.seal(["SLACK_BOT_TOKEN"], granted=["OTHER_DB_PASSWORD"])
assert "SLACK_BOT_TOKEN" not in os.environ and vault.environ()["SLACK_BOT_TOKEN"]
assert os.environ["OTHER_DB_PASSWORD"]  # granted to its server: still there for the run that needs it
print(protection.non_dumpable, protection.environ_block_scrubbed, flush=True)
time.sleep(30)
"""


def test_a_same_user_process_cannot_read_the_sealed_watchers_environment(tmp_path: Path):
    """Same user, no CAP_SYS_PTRACE (as root, both sides run as nobody): /proc/<pid>/environ and mem are closed."""
    user = 65534 if os.geteuid() == 0 else None
    token, granted = "xoxb-sealed-" + secrets.token_hex(8), "other-" + secrets.token_hex(8)
    env = {"PATH": os.defpath, "SLACK_BOT_TOKEN": token, "OTHER_DB_PASSWORD": granted}
    python = "/usr/bin/python3" if user is not None else sys.executable
    if user is not None and not Path(python).exists():
        pytest.skip("no /usr/bin/python3 to run the unprivileged watcher with")
    child = subprocess.Popen(
        [python, "-c", _SEALED_CHILD.format(root=str(ROOT))], env=env, stdout=subprocess.PIPE, text=True, user=user
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().split() == ["True", "True"]
        # What root (CAP_SYS_PTRACE) still reads: the block is scrubbed of both.
        if os.geteuid() == 0:
            block = Path(f"/proc/{child.pid}/environ").read_bytes()
            assert token.encode() not in block and granted.encode() not in block
        reader = (
            "import sys\n"
            "for name in ('environ', 'mem'):\n"
            "    try:\n"
            "        open(f'/proc/{sys.argv[1]}/' + name, 'rb').read(1)\n"
            "        print(name, 'readable')\n"
            "    except OSError as exc:\n"
            "        print(name, type(exc).__name__)\n"
        )
        seen = subprocess.run(
            [python, "-c", reader, str(child.pid)], capture_output=True, text=True, user=user, timeout=30, env=env
        )
        assert seen.stdout.split("\n")[:2] == ["environ PermissionError", "mem PermissionError"], seen
    finally:
        child.kill()
        child.wait()


def test_non_dumpable_is_reported_as_a_no_op_off_linux(monkeypatch: pytest.MonkeyPatch):
    from watcher.core import vault

    monkeypatch.setattr(sys, "platform", "darwin")
    assert vault.make_non_dumpable() == (False, "prctl(PR_SET_DUMPABLE) is Linux only (this is darwin)")


@pytest.mark.parametrize("mode", ["off", "none", "auto", "auto without bwrap"])
def test_status_says_which_protection_is_active(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    from watcher.cli import main

    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-status-" + secrets.token_hex(4))
    if mode == "auto without bwrap":
        monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    setting = mode.split()[0]
    loaded = write_config(tmp_path, [], tmp_path / "envs", sandbox=setting)
    assert main(["--config", str(loaded.path), "status"]) == 0
    out = capsys.readouterr().out
    assert "protection: watcher process non-dumpable; secret variables held in memory only: SLACK_BOT_TOKEN" in out
    chosen = sandbox.choose("auto")
    if setting in ("off", "none"):
        assert f"suite sandbox: off: suites.sandbox is {setting}" in out
    elif chosen.active:
        assert f"suite sandbox: bubblewrap ({sandbox.find_bwrap()}); network: install: no route out, only" in out
        assert "the watcher's proxy to the configured indexes (egress: block)" in out
    else:  # a room is asked for and cannot be had: said, and outside code refused
        assert f"suite sandbox: REFUSED: {chosen.reason}" in out
        assert "set suites.sandbox: none to run it without a sandbox" in out
    # The CLI gives the variable back when the command returns (for in-process callers like this test).
    assert os.environ["SLACK_BOT_TOKEN"].startswith("xoxb-status-")
