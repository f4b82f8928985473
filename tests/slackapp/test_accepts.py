"""Slack's accepts and the accept file's are one list to the diff (the run's own steering step): the file wins
where both name a change, and an expired Slack entry is reported exactly like an expired file entry."""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path

import yaml

from tests.slackapp.helpers import CHANGES, SERVER, VERSION, config_text, pinned_clock
from watcher.config import LoadedConfig, parse_config
from watcher.contract.accept import AcceptFile, apply_acceptance, parse_accept_file
from watcher.core.store import Store
from watcher.core.timefmt import today_utc
from watcher.decisions import records
from watcher.decisions.accepts import merge
from watcher.decisions.records import Actor
from watcher.slackapp.summary import accepted_text, run_section
from watcher.suites.runner import _Run

ALICE = Actor("U0ALICE", "alice")
REMOVED = {"rule": "tool_removed", "list": "tools", "name": "search_books"}
ISBN = {"rule": "required_parameter_added", "list": "tools", "name": "get_book", "path": "inputSchema.properties.isbn"}


def _setup(tmp_path: Path, accept_file: list[dict] | None) -> tuple[LoadedConfig, Store]:
    (tmp_path / "books").mkdir()
    (tmp_path / "state").mkdir()
    path = tmp_path / "watcher.yaml"
    data = yaml.safe_load(config_text(tmp_path / "state" / "watcher.db"))
    if accept_file is not None:
        data["servers"][0]["accept"] = "books/accept.yaml"
        (tmp_path / "books" / "accept.yaml").write_text(yaml.safe_dump(accept_file, sort_keys=False))
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    loaded = LoadedConfig(config=parse_config(path.read_text(), str(path)), path=path, base_dir=tmp_path)
    return loaded, Store(loaded.resolve(loaded.config.state))


def _slack_accept(store: Store, entry: dict, reason: str, expires: str) -> None:
    by = f"{ALICE.user_name} ({ALICE.user_id}) in Slack, 2026-12-03T12:00:00+00:00"
    stored = records.add_accepts(
        store, SERVER, "books", [{**entry, "reason": reason, "expires": expires, "by": by}], ALICE, 1
    )
    assert stored


def _steer(loaded: LoadedConfig) -> dict:
    run = _Run(loaded, loaded.config.server(SERVER), VERSION, None)
    return run.steer_contract({"changes": copy.deepcopy(CHANGES), "accepted": [], "summary": {}})


def test_a_slack_accept_alone_moves_its_change_like_a_file_entry(tmp_path, monkeypatch):
    with pinned_clock(monkeypatch):
        loaded, store = _setup(tmp_path, None)
        _slack_accept(store, ISBN, "every client sends isbn", "2027-01-15")
        diff = _steer(loaded)
        file_form = parse_accept_file(
            yaml.safe_dump([{**ISBN, "reason": "every client sends isbn", "expires": "2027-01-15"}]), "same.yaml"
        )
        by_file = apply_acceptance(
            {"changes": copy.deepcopy(CHANGES), "accepted": [], "summary": {}}, file_form, today_utc()
        )
    assert [c["name"] for c in diff["changes"]] == [c["name"] for c in by_file["changes"]] == ["search_books"]
    (accepted,) = diff["accepted"]
    assert (
        accepted["accepted"]["reason"] == "every client sends isbn"
        and "alice (U0ALICE) in Slack" in accepted["accepted"]["by"]
    )
    assert diff["summary"]["accepted"] == 1 and diff["acceptance"]["file"] == "Slack"
    assert diff["acceptance"]["slack"] == {
        "entries": 1,
        "from_slack": [
            {
                "label": "required_parameter_added tools/get_book inputSchema.properties.isbn",
                "by": "alice (U0ALICE) in Slack, 2026-12-03T12:00:00+00:00",
                "expires": "2027-01-15",
            }
        ],
        "shadowed": [],
    }


def test_where_file_and_slack_name_the_same_change_the_file_wins_and_says_so(tmp_path, monkeypatch):
    with pinned_clock(monkeypatch):
        loaded, store = _setup(tmp_path, [{**REMOVED, "reason": "search moved to find_books", "expires": "2027-02-01"}])
        _slack_accept(store, REMOVED, "accepted in a hurry", "2027-03-01")
        diff = _steer(loaded)
        text = accepted_text(loaded, store, today_utc())
    (accepted,) = diff["accepted"]
    assert accepted["name"] == "search_books" and accepted["accepted"]["reason"] == "search moved to find_books"
    (shadowed,) = diff["acceptance"]["slack"]["shadowed"]
    assert shadowed["label"] == "tool_removed tools/search_books"
    assert any("the accept file names the same change (the file wins)" in n for n in diff["notes"])
    assert diff["acceptance"]["file"].endswith("books/accept.yaml")
    assert "[file] tool_removed tools/search_books until 2027-02-01" in text
    assert "[Slack] tool_removed tools/search_books until 2027-03-01" in text
    assert text.endswith("(the file names the same change: the file's entry wins)")

    # The run page says so too.
    store.queue_run(SERVER, "python", VERSION, "t")
    run = store.claim_run()
    assert run is not None
    store.finish_run(run["id"], "fail", {"contract": diff}, 1.0)
    section = run_section(store, run["id"])
    assert section is not None
    assert section["shadowed"] == [
        "tool_removed tools/search_books (by alice (U0ALICE) in Slack, 2026-12-03T12:00:00+00:00, until 2027-03-01): "
        "the accept file names the same change, and the file wins"
    ]


def test_an_expired_slack_accept_is_reported_like_an_expired_file_entry(tmp_path, monkeypatch):
    with pinned_clock(monkeypatch):
        loaded, store = _setup(tmp_path, None)
        _slack_accept(store, ISBN, "until the client release", "2026-12-01")  # two days before the pinned today
        diff = _steer(loaded)
        text = accepted_text(loaded, store, today_utc())
    assert [c["name"] for c in diff["changes"]] == ["search_books", "get_book"] and not diff["accepted"]
    (note,) = [n for n in diff["notes"] if n.startswith("acceptance expired")]
    assert note == (
        "acceptance expired on 2026-12-01: required_parameter_added tools/get_book inputSchema.properties.isbn "
        "(until the client release); reported again: tools/get_book"
    )
    assert [e["name"] for e in diff["acceptance"]["expired"]] == ["get_book"]
    assert "(expired: reported again)" in text


def test_merge_keeps_the_file_first_and_leaves_out_a_rule_it_does_not_know(tmp_path):
    store = Store(tmp_path / "s.db")
    records.add_accepts(
        store, SERVER, "books", [{**REMOVED, "rule": "no_such_rule", "reason": "x", "expires": "2030-01-01"}], ALICE, 1
    )
    file = AcceptFile("a.yaml", ())
    merged = merge(file, records.accepts(store, SERVER))
    assert merged.accept.entries == () and merged.from_slack == 0 and merged.accept.path == "a.yaml"


def test_the_run_page_shows_slack_accepts_overridden_ones_and_the_actions(tmp_path, monkeypatch):
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from watcher.web.access import Access
    from watcher.web.app import web_parts
    from watcher.web.context import WebContext

    with pinned_clock(monkeypatch):
        loaded, store = _setup(tmp_path, [{**REMOVED, "reason": "search moved", "expires": "2027-02-01"}])
        _slack_accept(store, REMOVED, "accepted in a hurry", "2027-03-01")
        _slack_accept(store, ISBN, "isbn is always sent", "2027-03-01")
        diff = _steer(loaded)
        store.queue_run(SERVER, "python", VERSION, "t")
        run = store.claim_run()
        assert run is not None
        store.finish_run(run["id"], "pass", {"server": SERVER, "sdk_version": VERSION, "contract": diff}, 1.0)
        action = records.claim(
            store, "d1", ALICE, "books", "rerun", records.Origin("C1", "1.5"), server=SERVER, version=VERSION
        )
        assert action is not None
        records.finish(store, action, "queued run 9")
        routes, middleware = web_parts(WebContext(loaded, store), Access(None, False))
        page = TestClient(Starlette(routes=routes, middleware=middleware)).get(f"/runs/{run['id']}").text
    assert "<h2>From Slack</h2>" in page
    assert "get_book (required_parameter_added) until 2027-03-01 by alice (U0ALICE) in Slack" in page
    assert "tool_removed tools/search_books (by alice (U0ALICE) in Slack" in page and "the file wins" in page
    assert f"alice (U0ALICE): rerun {SERVER} @ {VERSION} from message 1.5 in C1 → queued run 9" in page


def test_a_run_page_without_slack_actions_has_no_slack_section(tmp_path, monkeypatch):
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from watcher.web.access import Access
    from watcher.web.app import web_parts
    from watcher.web.context import WebContext

    loaded, store = _setup(tmp_path, None)
    store.queue_run(SERVER, "python", VERSION, "t")
    run = store.claim_run()
    assert run is not None
    store.finish_run(run["id"], "pass", {"server": SERVER, "sdk_version": VERSION}, 1.0)
    routes, middleware = web_parts(WebContext(loaded, store), Access(None, False))
    answer = TestClient(Starlette(routes=routes, middleware=middleware)).get(f"/runs/{run['id']}")
    assert answer.status_code == 200 and "From Slack" not in answer.text


def test_a_state_the_run_cannot_read_costs_only_the_slack_entries_and_says_so(tmp_path, monkeypatch):
    with pinned_clock(monkeypatch):
        loaded, store = _setup(tmp_path, [{**REMOVED, "reason": "search moved to find_books", "expires": "2027-02-01"}])
        store.close()
        state = loaded.resolve(loaded.config.state)
        for name in (state.name + "-wal", state.name + "-shm"):
            (state.parent / name).unlink(missing_ok=True)
        state.write_bytes(b"not a state database\n" * 200)
        diff = _steer(loaded)
    (accepted,) = diff["accepted"]  # the file's entry still steers the run
    assert accepted["name"] == "search_books" and [c["name"] for c in diff["changes"]] == ["get_book"]
    (note,) = [n for n in diff["notes"] if n.startswith("Slack accepts not used")]
    assert str(state) in note and "not a database" in note
    assert diff["acceptance"]["slack"]["entries"] == 0 and "not a database" in diff["acceptance"]["slack"]["unread"]


def test_the_run_reads_slack_accepts_without_writing_the_state(tmp_path, monkeypatch):
    """A state no service has migrated (here one with only a table of another's): the run neither migrates
    nor fails on it; it has no Slack entries."""
    with pinned_clock(monkeypatch):
        loaded, store = _setup(tmp_path, None)
        store.close()
        state = loaded.resolve(loaded.config.state)
        for name in (state.name, state.name + "-wal", state.name + "-shm"):
            (state.parent / name).unlink(missing_ok=True)
        with sqlite3.connect(state) as db:
            db.execute("create table outbox (k text)")
        before = state.read_bytes()
        diff = _steer(loaded)
    assert [c["name"] for c in diff["changes"]] == ["search_books", "get_book"] and "acceptance" not in diff
    assert state.read_bytes() == before
    with sqlite3.connect(state) as db:
        assert [r[0] for r in db.execute("select name from sqlite_master")] == ["outbox"]
        assert db.execute("PRAGMA user_version").fetchone()[0] == 0
