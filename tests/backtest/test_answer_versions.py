"""The backtest answer across versions: answers stored by release 48c8349 (recorded on that release:
tests/fixtures/answers_48c8349/README.md) load through the store into every reader (text, Markdown, the
timeline, the page); what `build_answer` writes loads as it is; anything else is refused naming the field."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.backtest.helpers import fastmcp_server, write_config
from tests.backtest.test_render import SERVER, replayed, report
from watcher.backtest import timeline
from watcher.backtest.answer import AnswerError, load_answer
from watcher.backtest.history import Period
from watcher.backtest.render import render_markdown, render_text
from watcher.backtest.replay import Slot, build_answer
from watcher.core.store import Store
from watcher.ops.health import Readiness, build_app
from watcher.suites.settings import Server
from watcher.web.access import Access
from watcher.web.app import web_parts
from watcher.web.context import WebContext

OLD = Path(__file__).resolve().parents[1] / "fixtures" / "answers_48c8349"
ANSWERS = sorted(OLD.glob("answer_*.json"))


def _stored(tmp_path: Path, texts: list[str]) -> Store:
    """A state whose backtests table holds the recorded answers byte for byte, as 48c8349 wrote the column."""
    store = Store(tmp_path / "state" / "watcher.db")
    with sqlite3.connect(tmp_path / "state" / "watcher.db") as db:
        for n, text in enumerate(texts, start=1):
            db.execute(
                "insert into backtests (id, server, sdk, package, since, until, params, status, created, answer) "
                "values (?, 'notes-1x', 'python', 'mcp', '2026-06-01', '2026-06-30', ?, 'done', "
                "'2026-12-01T12:00:00Z', ?)",
                [n, f"p{n}", text],
            )
    return store


def test_the_recorded_answers_are_what_they_claim():
    assert [p.name for p in ANSWERS] == ["answer_actions_fail.json", "answer_interrupted.json"]
    failed, interrupted = (json.loads(p.read_text(encoding="utf-8")) for p in ANSWERS)
    assert failed["versions"][0]["signature"]["rule"] == "contract_breaks" and failed["findings"]
    assert interrupted["status"] == "interrupted" and interrupted["versions"][1]["seconds"] is None


@pytest.mark.parametrize("path", ANSWERS, ids=lambda p: p.stem)
def test_an_answer_stored_by_48c8349_loads_and_every_reader_reads_it(tmp_path: Path, path: Path):
    text = path.read_text(encoding="utf-8")
    store = _stored(tmp_path, [text])
    row = store.backtest(1)
    assert row is not None
    answer = load_answer(row["answer"], "backtest #1")
    assert answer == json.loads(text)  # handed back as stored: nothing dropped, nothing added
    assert render_text(answer).startswith(f"Backtest #{answer['id']}: {answer['server']} against mcp")
    assert render_markdown(answer).startswith("## Backtest #")
    picture = timeline.render(answer)
    assert [m.version for m in picture.markers] == [v["version"] for v in answer["versions"]]
    loaded = write_config(tmp_path, "http://127.0.0.1:9/simple/", [fastmcp_server()], tmp_path)
    ctx = WebContext(loaded, store, now=lambda: datetime(2026, 12, 1, 12, tzinfo=UTC))
    client = TestClient(build_app(Readiness(store, 30, ctx.now(), lambda: True), *web_parts(ctx, Access(None, False))))
    assert client.get("/backtests").status_code == 200
    page = client.get("/backtests/1")
    assert page.status_code == 200
    for v in answer["versions"]:
        assert f'data-version="{v["version"]}" data-verdict="{v["verdict"]}"' in page.text
    assert client.get("/backtests/1/timeline.png").content[:4] == b"\x89PNG"


def test_what_build_answer_writes_loads_as_it_is():
    server = Server.model_validate(SERVER)
    versions = [replayed("2.0.0a1", "2026-06-11", True), replayed("2.0.0", "2026-07-28", False)]
    slots = [Slot(versions[0], 0, "k0", "fail", report("fail", ["tools-call"])), Slot(versions[1], 1, "k1")]
    answer = build_answer(3, server, "pypi", "mcp", date(2026, 6, 1), date(2026, 8, 1), Period(versions, [], []),
                          slots, "interrupted")  # fmt: skip
    stored = json.loads(json.dumps(answer, sort_keys=True, default=str))  # as the store keeps it
    assert load_answer(stored, "backtest #3") == answer


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda a: [a], "a backtest answer is a JSON object, not list"),
        (lambda a: {k: v for k, v in a.items() if k != "versions"}, "versions: Field required"),
        (lambda a: {**a, "versions": [{**a["versions"][0], "reused": "sometimes"}]}, "versions.0.reused: Input should"),
        (lambda a: {**a, "cost": {**a["cost"], "seconds": "soon"}}, "cost.seconds: Input should be a valid number"),
        (lambda a: {**a, "findings": [{**a["findings"][0], "lead_days": "soon"}]}, "findings.0.lead_days"),
    ],
)
def test_a_stored_answer_of_no_known_shape_is_refused_naming_the_field(tmp_path: Path, change, named: str):
    good = json.loads(ANSWERS[0].read_text(encoding="utf-8"))
    with pytest.raises(AnswerError) as caught:
        load_answer(change(good), "backtest #1")
    assert str(caught.value).startswith("backtest #1: ") and named in str(caught.value)
    store = _stored(tmp_path, [json.dumps(change(good))])
    loaded = write_config(tmp_path, "http://127.0.0.1:9/simple/", [fastmcp_server()], tmp_path)
    ctx = WebContext(loaded, store, now=lambda: datetime(2026, 12, 1, 12, tzinfo=UTC))
    client = TestClient(
        build_app(Readiness(store, 30, ctx.now(), lambda: True), *web_parts(ctx, Access(None, False))),
        raise_server_exceptions=True,
    )
    with pytest.raises(AnswerError, match=r"^backtest #1: "):
        client.get("/backtests/1")


def test_fields_a_later_version_adds_are_kept():
    good = json.loads(ANSWERS[0].read_text(encoding="utf-8"))
    later = {**good, "answer_version": 2, "cost": {**good["cost"], "dollars": 0.5}}
    assert load_answer(later, "backtest #1") == later
