"""The pending onboarding messages of appeared servers (watcher/serverset/welcome.py) are read from the state
through their types: an entry that does not fit is left out, named in the log with its field, and kept as
stored; the other welcomes still go out, and the pass goes on."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from tests.serverset.helpers import central_server
from watcher.config import LoadedConfig, load_config
from watcher.core.store import Store
from watcher.serverset.changes import ServerChange
from watcher.serverset.welcome import KV, expect_welcome, forget_welcome, send_due_welcomes


def _setting(tmp_path: Path) -> tuple[LoadedConfig, Store]:
    """A central file with the servers `books` and `shelf`, and a store where each has its first run done."""
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "state").mkdir()
    path = tmp_path / "watcher.yaml"
    data = {
        "state": str(tmp_path / "state" / "watcher.db"),
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": "http://127.0.0.1:9/simple/"}],
        "teams": [{"name": "books", "slack_channel": "#books-mcp"}],
        "servers": [central_server("books", project), central_server("shelf", project)],
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    loaded = load_config(path)
    store = Store(tmp_path / "state" / "watcher.db")
    for name in ("books", "shelf"):
        store.record_run(name, "python", "2.3.0", "cli", {"verdict": "pass", "reasons": []})
    return loaded, store


def _welcome(name: str) -> dict[str, object]:
    return {
        "name": name,
        "team": "books",
        "origin": "central",
        "where": "watcher.yaml",
        "version": "2.3.0",
        "since": "2026-12-02T16:16:38Z",
        "detection": None,
        "overridden": None,
    }


@pytest.mark.parametrize(
    ("malformed", "message"),
    [
        (
            {**_welcome("atlas"), "version": 230},
            "state serverset:welcome entry 1: version: Input should be a valid string",
        ),
        (
            {k: v for k, v in _welcome("atlas").items() if k != "team"},
            "state serverset:welcome entry 1: team: Field required",
        ),
        (
            {**_welcome("atlas"), "detection": {"language": "python"}},
            "state serverset:welcome entry 1: detection.registry: Field required",
        ),
        ("atlas", "state serverset:welcome entry 1: : Input should be a valid dictionary"),
    ],
)
def test_a_malformed_stored_welcome_is_left_out_named_and_kept_and_the_others_go_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, malformed: object, message: str
):
    caplog.set_level(logging.ERROR, logger="watcher")
    loaded, store = _setting(tmp_path)
    store.set_kv(KV, [_welcome("books"), malformed, _welcome("shelf")])

    sent = send_due_welcomes(loaded, store)  # no crash: the two readable welcomes go out

    assert len(sent) == 2
    texts = [r["text"] for r in store.outbox() if r["kind"] == "server-onboarding"]
    assert sorted(t.split(" too,")[0] for t in texts) == [
        "mcp-watcher now watches books",
        "mcp-watcher now watches shelf",
    ]
    [logged] = [r.getMessage() for r in caplog.records if r.name == "watcher.serverset.welcome"]
    assert message in logged and "left out, kept as stored" in logged
    assert store.get_kv(KV) == [malformed]  # kept as it was stored, not saved over
    assert send_due_welcomes(loaded, store) == []  # and left out again, never sent


def test_writing_the_pending_welcomes_keeps_a_malformed_entry_as_stored(tmp_path: Path):
    loaded, store = _setting(tmp_path)
    malformed = {**_welcome("atlas"), "since": None}
    store.set_kv(KV, [malformed, _welcome("books")])
    change = ServerChange("appeared", "shelf", "books", "central", "watcher.yaml", "2026-12-03T09:00:00Z")
    expect_welcome(store, change, "2.3.0")
    assert store.get_kv(KV) == [malformed, _welcome("books"), {**_welcome("shelf"), "since": change.at}]
    forget_welcome(store, "books")
    assert store.get_kv(KV) == [malformed, {**_welcome("shelf"), "since": change.at}]


def test_a_stored_value_that_is_no_list_is_named_and_kept(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.ERROR, logger="watcher")
    loaded, store = _setting(tmp_path)
    store.set_kv(KV, {"books": _welcome("books")})
    assert send_due_welcomes(loaded, store) == []
    assert "state serverset:welcome: the pending onboarding messages are a JSON list, not dict" in caplog.text
    assert store.get_kv(KV) == {"books": _welcome("books")}
