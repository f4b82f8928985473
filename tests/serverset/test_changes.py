"""Every change of the server set is an event, recorded and logged once, and acted on: a server that appears is
pre-built, runs once on its baseline and gets its onboarding message; one that disappears is retired (runs kept,
queued ones closed); one whose definition changed is built again. The central file changing, read again."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
import yaml

from tests.fakes.slack_server import FakeSlack
from tests.serverset.helpers import central_server
from watcher.config import load_config
from watcher.core.store import Store
from watcher.live import LiveConfig
from watcher.notify import keys
from watcher.notify.delivery import WebApiSink, deliver_outbox
from watcher.notify.settings import SlackSettings
from watcher.reload import ConfigKeeper
from watcher.serverset.changes import recent_changes
from watcher.serverset.record import ServerRecord
from watcher.serverset.welcome import send_due_welcomes
from watcher.suites.build.prebuild import Prebuilder
from watcher.suites.worker import process_queue


def write(path: Path, tmp_path: Path, servers: list[dict[str, object]], slack: FakeSlack) -> None:
    data = {
        "state": str(tmp_path / "state" / "watcher.db"),
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": "http://127.0.0.1:9/simple/"}],
        "teams": [{"name": "books", "slack_channel": "#books-mcp"}],
        "servers": servers,
        "slack": {"api_url": slack.api_url, "retries": 1},
        "suites": {"runs_dir": str(tmp_path / "runs"), "envs_dir": str(tmp_path / "envs")},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def setting(tmp_path: Path, slack: FakeSlack) -> tuple[Path, Path]:
    """A project whose server exits at once (a quick, real run) and a central file with one server of it."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "server.py").write_text("print('not an MCP server')\n")
    (tmp_path / "state").mkdir()
    path = tmp_path / "watcher.yaml"
    write(path, tmp_path, [central_server("books", project)], slack)
    return project, path


def test_each_change_is_one_event_acted_on(tmp_path: Path, slack: FakeSlack, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="watcher")
    project, path = setting(tmp_path, slack)
    store = Store(tmp_path / "state" / "watcher.db")
    live = LiveConfig(load_config(path))
    builder = Prebuilder(live, threading.Event())
    keeper = ConfigKeeper(live, store, lambda: builder)
    try:
        # The first look records the set: no event (its servers are where the service starts from).
        assert keeper.refresh() == [] and ServerRecord.load(store).taken
        assert store.runs(status="queued") == [] and recent_changes(store) == []

        # A server added to the central file: read again, in force at once, one event, its first run queued.
        write(path, tmp_path, [central_server("books", project), central_server("shelf", project)], slack)
        assert keeper.read_central()
        [appeared] = keeper.refresh()
        assert (appeared.kind, appeared.name) == ("appeared", "shelf")
        assert [s.name for s in live.config.servers] == ["books", "shelf"]
        [queued] = store.runs(status="queued")
        assert (queued["server"], queued["sdk_version"]) == ("shelf", "2.3.0")
        assert queued["trigger"] == keys.server_onboarding_trigger("shelf")
        assert builder.wait("shelf", "2.3.0") is not None  # pre-built when it appeared
        assert keeper.refresh() == []  # nothing changed: nothing again

        # Its run: no separate result notice; the onboarding message carries the verdict.
        [outcome] = process_queue(live.loaded, store)
        assert outcome["server"] == "shelf" and outcome["notice"] is None
        assert len(send_due_welcomes(live.loaded, store)) == 1
        assert send_due_welcomes(live.loaded, store) == []
        deliver_outbox(store, WebApiSink(slack.token, SlackSettings(api_url=slack.api_url, retries=1), store))
        [message] = [m["text"] for m in slack.messages]
        assert message.startswith("mcp-watcher now watches shelf too, from the central config")
        assert f"first run: {outcome['verdict']}" in message

        # Redefined: one event naming the keys, and its environments built again.
        redefined = central_server("shelf", project, prepare=[["python", "-c", "print('built again')"]])
        write(path, tmp_path, [central_server("books", project), redefined], slack)
        keeper.read_central()
        [change] = keeper.refresh()
        assert (change.kind, change.changed) == ("redefined", ("prepare",))
        rebuilt = builder.wait("shelf", "2.3.0")
        assert rebuilt is not None and rebuilt.ok and not rebuilt.cached

        # Retired: its queued run is closed saying why, its runs are kept, its name is reserved.
        store.queue_run("shelf", "python", "2.4.0b1", "release:python:2.4.0b1")
        write(path, tmp_path, [central_server("books", project)], slack)
        keeper.read_central()
        [retired] = keeper.refresh()
        assert retired.kind == "retired" and retired.name == "shelf"
        assert store.runs(status="queued") == []
        closed = [r for r in store.runs(server="shelf") if r["sdk_version"] == "2.4.0b1"]
        assert closed[0]["verdict"] == "error" and "retired before this run started" in str(closed[0]["report"])
        assert len(store.runs(server="shelf")) == 2  # the onboarding run is kept
        assert [e.name for e in ServerRecord.load(store).retired()] == ["shelf"]
    finally:
        builder.shutdown()
        store.close()

    kinds = [(c["kind"], c["name"]) for c in recent_changes(Store(tmp_path / "state" / "watcher.db"))]
    assert kinds == [("retired", "shelf"), ("redefined", "shelf"), ("appeared", "shelf")]
    lines = [r.getMessage() for r in caplog.records if r.name == "watcher.serverset.changes"]
    assert sum("server shelf (team books) appeared" in line for line in lines) == 1
    assert sum("redefined" in line for line in lines) == 1 and sum("retired" in line for line in lines) == 1
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR], "no traceback, no error"


def test_a_central_file_that_no_longer_loads_keeps_the_one_in_force(tmp_path: Path, slack: FakeSlack):
    _project, path = setting(tmp_path, slack)
    store = Store(tmp_path / "state" / "watcher.db")
    live = LiveConfig(load_config(path))
    keeper = ConfigKeeper(live, store, lambda: None)
    keeper.refresh()
    path.write_text(path.read_text() + "servers: oops\n", encoding="utf-8")
    assert keeper.read_central() is False
    assert keeper.central_error is not None and "watcher.yaml" in keeper.central_error
    assert [s.name for s in live.config.servers] == ["books"]
    assert keeper.read_central() is False  # the same text is not read (nor said) again; the old one stays
    store.close()


def test_a_draining_queue_takes_the_configuration_in_force_at_each_run(tmp_path: Path, slack: FakeSlack):
    project, path = setting(tmp_path, slack)
    live = LiveConfig(load_config(path))
    write(path, tmp_path, [central_server("books", project), central_server("shelf", project)], slack)
    with_shelf = load_config(path)
    store = Store(tmp_path / "state" / "watcher.db")
    store.queue_run("books", "python", "2.3.0", "release:python:2.3.0")
    store.queue_run("shelf", "python", "2.3.0", "release:python:2.3.0")  # not configured yet when the drain starts

    def added_meanwhile(outcome: dict[str, object]) -> None:
        if outcome["server"] == "books":
            live.replace(with_shelf)  # a team file's server arrives while the queue drains

    outcomes = process_queue(live, store, on_result=added_meanwhile)
    store.close()
    shelf = next(o for o in outcomes if o["server"] == "shelf")
    reasons = str(shelf["report"].get("reasons"))  # type: ignore[union-attr]
    assert "no server named" not in reasons  # run as a configured server, not refused as an unknown one
    assert shelf["report"]["install"]["ok"]  # type: ignore[index]
