"""kill -9 the real service at awkward moments; after a restart nothing is sent twice, nothing is lost,
no process is left behind, and an interrupted suite run is recorded and run again."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from tests.fakes.mcp_history import McpHistory
from tests.fakes.slack_server import FakeSlack
from tests.helpers import start_service, wait_until
from tests.spec.helpers import spec_config
from tests.suites.helpers import library_server
from watcher.core.store import Store


def make_config(world: dict, write_config, **extra) -> Path:
    spec = spec_config(world["gh"], teams=[{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}])
    return write_config(
        {
            **spec,
            "sdks": [
                {"name": "python", "registry": "pypi", "package": "mcp", "url": world["registry"].url("pypi/simple")}
            ],
            "slack": {"api_url": world["slack"].api_url, "retries": 0},
            "schedule": {"poll_minutes": 0.02, "spec_poll_minutes": 60, "deliver_seconds": 0.5},
            "http_client": {"timeout_seconds": 2, "retries": 0, "backoff_seconds": 0},
            **extra,
        }
    )


def keys(slack: FakeSlack) -> list[str]:
    return [m["metadata"]["event_payload"]["key"] for m in slack.messages]


def state_of(config: Path) -> Store:
    return Store(config.parent / "state" / "watcher.db")


def test_kill_mid_poll_then_restart_alerts_once(world, write_config, tmp_path):
    history = McpHistory(world["page"])
    history.before("2.0.0rc1")
    config = make_config(world, write_config)
    env = {"SLACK_BOT_TOKEN": world["slack"].token}
    service = start_service(config, env, tmp_path / "one.log")
    try:
        service.wait_http()
        service.wait_for_log("baseline taken for python")
        world["registry"].fail("/pypi/simple/mcp/", hang=True)
        history.before("2.0.0")
        before = world["registry"].stats.by_path["/pypi/simple/mcp/"]
        wait_until(lambda: world["registry"].stats.by_path["/pypi/simple/mcp/"] > before, message="a poll in flight")
    finally:
        service.kill_hard()
    world["registry"].clear_faults()
    again = start_service(config, env, tmp_path / "two.log")
    try:
        again.wait_http()
        wait_until(lambda: keys(world["slack"]), message="the rc1 alert after the restart")
        again.wait_for_log("poll: 0 new")
    finally:
        assert again.terminate() == 0
    assert keys(world["slack"]) == ["release:python:2.0.0rc1:books"]


def test_kill_while_slack_is_answering_never_sends_twice(world, write_config, tmp_path):
    history = McpHistory(world["page"])
    history.before("2.0.0rc1")
    config = make_config(world, write_config)
    env = {"SLACK_BOT_TOKEN": world["slack"].token}
    service = start_service(config, env, tmp_path / "one.log")
    try:
        service.wait_http()
        service.wait_for_log("baseline taken for python")
        # Slack takes its time: the message is accepted while the watcher dies waiting for the answer.
        world["slack"].slow_next("chat.postMessage", seconds=3)
        history.before("2.0.0")
        wait_until(lambda: "chat.postMessage" in world["slack"].calls, message="the post under way")
    finally:
        service.kill_hard()
    row = state_of(config).outbox_row("release:python:2.0.0rc1:books")
    assert row["status"] == "sending", "the outcome is unknown to the watcher"
    wait_until(lambda: len(world["slack"].messages) == 1, message="Slack to record the message")
    again = start_service(config, env, tmp_path / "two.log")
    try:
        again.wait_http()
        wait_until(
            lambda: state_of(config).outbox_row("release:python:2.0.0rc1:books")["status"] == "sent",
            message="the row recognised as sent",
        )
        again.wait_for_log("poll: 0 new")
    finally:
        assert again.terminate() == 0
    assert keys(world["slack"]) == ["release:python:2.0.0rc1:books"]
    assert "conversations.history" in world["slack"].calls


def test_slack_down_for_a_long_stretch_delivers_everything_once(world, write_config, tmp_path):
    history = McpHistory(world["page"])
    history.before("2.0.0b1")
    config = make_config(world, write_config)
    env = {"SLACK_BOT_TOKEN": world["slack"].token}
    service = start_service(config, env, tmp_path / "one.log")
    try:
        service.wait_http()
        service.wait_for_log("baseline taken for python")
        world["slack"].fail_next("chat.postMessage", status=503, times=10_000)
        history.before("2.0.0")  # b1, b2 and rc1 appear while Slack is down
        wait_until(
            lambda: (
                min((r["attempts"] or 0) for r in state_of(config).outbox()) >= 3
                if state_of(config).outbox()
                else False
            ),
            message="several failed delivery rounds",
        )
        assert world["slack"].messages == []
        metrics = service.get("/metrics").text
        assert 'mcp_watcher_slack_errors_total{kind="server_error"}' in metrics
        assert "mcp_watcher_outbox_depth 3.0" in metrics
        world["slack"].heal()
        wait_until(lambda: len(world["slack"].messages) == 3, message="delivery after recovery")
        wait_until(lambda: "mcp_watcher_outbox_depth 0.0" in service.get("/metrics").text, message="empty outbox")
    finally:
        assert service.terminate() == 0
    assert sorted(keys(world["slack"])) == sorted(
        f"release:python:{v}:books" for v in ("2.0.0b1", "2.0.0b2", "2.0.0rc1")
    )


def _alive(pgid: int) -> bool:
    """Whether a process of group `pgid` still runs. A killed one may linger as a zombie: when an earlier
    test in this process ran a suite in-process, this process is a child subreaper, so the killed service's
    orphans came to it, and nobody else would reap them (they are reaped here; a zombie runs nothing)."""
    running = False
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        state, ppid, group = fields[0], int(fields[1]), int(fields[2])
        if group != pgid:
            continue
        if state != "Z":
            running = True
        elif ppid == os.getpid():
            with contextlib.suppress(ChildProcessError):
                os.waitpid(int(entry), os.WNOHANG)
    return running


def _server_under_test_started(runs: Path) -> bool:
    """The run itself is under way: the server under test has its logs (the environment was pre-built before)."""
    return any(runs.glob("library/*/server.stdout.log"))


@pytest.mark.slow
def test_kill_mid_suite_leaves_no_orphans_and_the_run_is_redone(world, write_config, tmp_path, sdk_envs):
    """A release its team tests appears, its suite run starts a real server; the watcher dies; the restart
    cleans up and reruns."""
    history = McpHistory(world["page"])
    history.before("2.3.0")
    shared_envs = Path(os.environ.get("MCP_WATCHER_TEST_ENVS", sdk_envs))
    server = library_server(requirements=["2025-11-25"])
    config = make_config(
        world,
        write_config,
        servers=[server],
        suites={
            "on_stable": True,
            "on_baseline": False,
            "envs_dir": str(shared_envs),
            "runs_dir": str(tmp_path / "runs"),
            # Off: the groups outlive the crash, and the restart's reap is what stops them (a bubblewrap
            # room has --die-with-parent, so it dies with the watcher and there would be nothing to reap).
            "sandbox": "off",
        },
    )
    # The team follows stable releases too, so mcp 2.3.0 (a real, installable version) starts a run.
    import yaml

    data = yaml.safe_load(config.read_text())
    data["teams"][0].update({"notify_stable": True, "servers": ["library"]})
    config.write_text(yaml.safe_dump(data))
    groups = tmp_path / "runs" / ".process-groups"
    env = {"SLACK_BOT_TOKEN": world["slack"].token}
    service = start_service(config, env, tmp_path / "one.log")
    try:
        service.wait_http()
        service.wait_for_log("baseline taken for python")
        history.whole()
        # The server under test is up (its pid file is written when it starts) — then the crash.
        wait_until(
            lambda: (
                _server_under_test_started(tmp_path / "runs") and any(_alive(int(p.name)) for p in groups.iterdir())
            ),
            timeout=300,
            message="a child process group of the suite run",
        )
        tracked = [int(p.name) for p in groups.iterdir()]
    finally:
        service.kill_hard()
    assert any(_alive(pgid) for pgid in tracked), "the crash left the suite's children running"
    assert state_of(config).runs(status="running"), "the run was under way"

    again = start_service(config, env, tmp_path / "two.log")
    try:
        again.wait_http()
        wait_until(lambda: not any(_alive(pgid) for pgid in tracked), timeout=20, message="orphans reaped")
        done = lambda: state_of(config).runs(status="done", server="library")  # noqa: E731
        wait_until(done, timeout=400, message="the rerun to finish")
        reply = "run:library:2.3.0:books"
        wait_until(lambda: reply in keys(world["slack"]), timeout=30, message="the threaded result")
    finally:
        assert again.terminate() == 0
    assert "interrupted" in again.log() or "re-queued" in again.log()
    run = done()[0]
    assert run["verdict"] in ("pass", "fail") and run["report"]["sdk_version"] == "2.3.0"
    assert keys(world["slack"]).count(reply) == 1
    alert, result = (
        m
        for m in world["slack"].messages
        if m["metadata"]["event_payload"]["key"] in ("release:python:2.3.0:books", reply)
    )
    assert result["thread_ts"] == alert["ts"]
    assert not any(_alive(pgid) for pgid in tracked)


@pytest.mark.slow
def test_a_beta_seen_by_poll_gets_one_threaded_result_even_across_a_sigterm(world, write_config, tmp_path, sdk_envs):
    """mcp 2.0.0rc1 appears: alert, suite run on the real SDK beta; SIGTERM mid-run records it as interrupted
    and kills its processes; the next start reruns it and replies once in the alert's thread."""
    history = McpHistory(world["page"])
    history.before("2.0.0rc1")
    shared_envs = Path(os.environ.get("MCP_WATCHER_TEST_ENVS", sdk_envs))
    config = make_config(
        world,
        write_config,
        servers=[library_server(requirements=["2025-11-25"])],
        suites={"on_baseline": False, "envs_dir": str(shared_envs), "runs_dir": str(tmp_path / "runs")},
    )
    groups = tmp_path / "runs" / ".process-groups"
    env = {"SLACK_BOT_TOKEN": world["slack"].token}
    service = start_service(config, env, tmp_path / "one.log")
    try:
        service.wait_http()
        service.wait_for_log("baseline taken for python")
        history.before("2.0.0")  # the release candidate, nothing after it
        wait_until(
            lambda: (
                _server_under_test_started(tmp_path / "runs") and any(_alive(int(p.name)) for p in groups.iterdir())
            ),
            timeout=300,
            message="the suite run's first child process",
        )
        tracked = [int(p.name) for p in groups.iterdir()]
        assert service.terminate(timeout=60) == 0
    finally:
        service.stop()
    assert not any(_alive(pgid) for pgid in tracked), "SIGTERM left a child of the suite run behind"
    run = state_of(config).runs(server="library")[0]
    assert (run["status"], run["verdict"]) == ("queued", "interrupted")
    assert "interrupted by shutdown" in service.log()

    again = start_service(config, env, tmp_path / "two.log")
    reply = "run:library:2.0.0rc1:books"
    try:
        again.wait_http()
        wait_until(lambda: reply in keys(world["slack"]), timeout=400, message="the threaded result")
    finally:
        assert again.terminate() == 0
    assert keys(world["slack"]) == ["release:python:2.0.0rc1:books", reply]
    alert, result = world["slack"].messages
    assert result["thread_ts"] == alert["ts"]
    assert "2.0.0rc1" in result["text"]
    finished = state_of(config).runs(server="library")[0]
    assert finished["status"] == "done" and finished["verdict"] in ("pass", "fail")
