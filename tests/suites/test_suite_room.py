"""The conformance suite's run room: its install and Node read-only, its results folder writable, and one port
forwarded to the server under test (itself in a room); nothing else of the host. Without a sandbox (`none`)
the suite runs on the host as before, and the same hostile CLI then reaches what the room keeps from it.

The suite here is one of our own making (tests/reliability/helpers.py), laid out as npm installs the real one,
so no install is needed; the server is a small Node HTTP server in its own room.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.helpers import (
    PACKAGE,
    Targets,
    assert_stopped,
    host_secret,
    host_service,
    node_server,
    read_mark,
    write_suite,
)
from watcher.boundary import sandbox, toolchain
from watcher.boundary.network import Reach
from watcher.boundary.process import ServerProcess, free_port, scrubbed_env
from watcher.suites.judge import conformance

SETS = {"2025-11-25": ["server-reach"]}


@pytest.fixture
def host_port() -> Iterator[int]:
    with host_service() as port:
        yield port


@pytest.fixture
def secret_holder() -> Iterator[tuple[int, str]]:
    with host_secret() as held:
        yield held


class Deployment:
    """The watcher's files the suite must not reach, and a suite install of ours."""

    def __init__(self, tmp_path: Path, host_service: int, host_secret: tuple[int, str]) -> None:
        self.token = tmp_path / "secrets" / "slack-token"
        self.token.parent.mkdir()
        self.token.write_text("xoxb-suite-room-" + secrets.token_hex(6), encoding="utf-8")
        self.token.chmod(0o600)
        self.config = tmp_path / "watcher.yaml"
        self.config.write_text("slack: {token_file: secrets/slack-token}\n", encoding="utf-8")
        self.db = tmp_path / "state" / "watcher.db"
        self.db.parent.mkdir()
        with sqlite3.connect(self.db) as db:
            db.execute("create table outbox (k text)")
        self.runs, self.envs = tmp_path / "runs", tmp_path / "envs"
        self.runs.mkdir()
        self.envs.mkdir()
        self.targets = Targets(
            self.token, self.config, self.db, self.runs, self.envs, host_secret[0], host_secret[1], host_service
        )
        self.tmp = tmp_path

    def tool(self, hostile: bool) -> conformance.ConformanceTool:
        root = self.envs / "_tools" / "conformance-test" / "node_modules" / PACKAGE
        write_suite(root, "9.9.9", SETS, self.targets if hostile else None)
        return conformance.ConformanceTool(f"{PACKAGE}@9.9.9", "9.9.9", root)

    def tables(self) -> list[str]:
        with sqlite3.connect(self.db) as db:
            return [row[0] for row in db.execute("select name from sqlite_master where type='table'")]


@pytest.fixture
def deployment(tmp_path: Path, host_port: int, secret_holder: tuple[int, str]) -> Deployment:
    return Deployment(tmp_path, host_port, secret_holder)


def _server(deployment: Deployment, boundary: sandbox.Sandbox) -> ServerProcess:
    project = node_server(deployment.tmp / "server", "victim")
    port = free_port()
    return ServerProcess(
        [toolchain.node(), "server.js", "--port", str(port)],
        cwd=project["path"],  # type: ignore[arg-type]
        env=scrubbed_env(extra={"SERVER_NAME": "victim"}),
        log_dir=deployment.tmp / "server-logs",
        transport="http",
        port=port,
        launcher=boundary.room(readable=[str(project["path"]), toolchain.node_root()]),
    )


def _run(deployment: Deployment, boundary: sandbox.Sandbox, hostile: bool) -> tuple[dict[str, Any], Path, Reach]:
    tool = deployment.tool(hostile)
    with _server(deployment, boundary) as server:
        started = server.start(30)
        assert started.ok, (started.error, started.evidence)
        reach = server.reach()
        assert reach is not None
        out = deployment.runs / "victim" / "run-1" / "conformance"
        report = conformance.run_requirement_set(
            tool,
            server=reach,
            boundary=boundary,
            revision="2025-11-25",
            baseline_path=None,
            out_dir=out,
            timeout=60,
            secret_names={"SLACK_BOT_TOKEN"},
        )
    return report, out / "results", reach


def _active() -> sandbox.Sandbox:
    boundary = sandbox.choose("bubblewrap")
    if not boundary.active:
        pytest.skip(f"the run boundary cannot be had here: {boundary.reason}")
    return boundary


def test_the_suite_runs_in_its_own_room_and_reaches_the_server_through_one_forwarded_port(deployment: Deployment):
    boundary = _active()
    report, results, reach = _run(deployment, boundary, hostile=False)
    assert report.get("error") is None, report
    assert report["ok"] is True and report["passed"] == 1, report
    assert report["room"].startswith(f"bubblewrap room (network: one forwarded port: 127.0.0.1:{reach.port} to"), report
    reached = json.loads((results / "reached.json").read_text(encoding="utf-8"))
    # The suite asked at the server's own port inside its room, and the server, in a room of its own (its own
    # network namespace), saw that Host header.
    assert reach.netns_pid is not None
    assert reached["url"] == f"http://127.0.0.1:{reach.port}/mcp", (reached, reach)
    answer = json.loads(reached["body"])["result"]
    assert answer == {"served_by": "victim", "host": f"127.0.0.1:{reach.port}"}, reached


def test_a_hostile_suite_cli_in_its_room_reaches_nothing_of_the_host(deployment: Deployment):
    boundary = _active()
    before = sorted(p.name for p in deployment.db.parent.iterdir())
    report, results, _ = _run(deployment, boundary, hostile=True)
    mark = read_mark(results / "attack-cli.json")  # it ran, in its room, as the room's user
    if os.geteuid() == 0:
        assert mark["uid"] == sandbox.SANDBOX_UID  # type: ignore[comparison-overlap]
    assert_stopped(mark, "planted_link")
    assert report["ok"] is True, report  # and its judgement of the server is still read
    assert deployment.tables() == ["outbox"]
    assert sorted(p.name for p in deployment.db.parent.iterdir()) == before
    assert not (deployment.runs / "pwned.txt").exists() and not (deployment.envs / "pwned.txt").exists()
    assert (results / "token-link").is_symlink()  # the link it made is there; read in the room, it led nowhere


def test_with_sandbox_none_the_suite_runs_on_the_host_and_the_same_attacks_land(deployment: Deployment):
    """The contrast that shows the attacks are real: the explicit opt-out runs the suite as the watcher's child."""
    boundary = sandbox.choose("none")
    report, results, _ = _run(deployment, boundary, hostile=True)
    assert report["room"].startswith("host (opted out"), report
    mark = read_mark(results / "attack-cli.json")
    assert mark["token"] == "DONE: " + deployment.token.read_text(encoding="utf-8"), mark
    assert mark["config"].startswith("DONE") and mark["state_db"].startswith("DONE"), mark
    assert mark["host_loopback"] == "DONE: connected", mark
    if os.geteuid() == 0:  # a same-user process's environment is readable too; as root, any
        assert mark["host_proc"].startswith("DONE: found in"), mark
    assert "pwned" in deployment.tables()


def test_a_refused_sandbox_runs_no_suite(deployment: Deployment, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    refused = sandbox.choose("auto")
    tool = deployment.tool(hostile=True)
    report = conformance.run_requirement_set(
        tool,
        server=Reach.of_url("http://127.0.0.1:9/mcp"),
        boundary=refused,
        revision="2025-11-25",
        baseline_path=None,
        out_dir=deployment.runs / "refused",
        timeout=30,
        secret_names=set(),
    )
    assert "the conformance suite was not run: suites.sandbox is auto, but bubblewrap cannot run here" in str(
        report["error"]
    )
    time.sleep(0.2)
    assert not (deployment.runs / "refused" / "results" / "attack-cli.json").exists()
