"""The matrix's data: which versions are columns, each cell's state and age (with a fixed clock)."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import yaml
from starlette.requests import Request

from tests.fakes.github_server import FakeGitHub
from tests.spec.helpers import poll as spec_poll
from tests.spec.helpers import serve_spec, spec_config
from tests.suites.helpers import library_server
from tests.web.helpers import NOW
from watcher.config import LoadedConfig, load_config
from watcher.core.store import Store
from watcher.web.access import Access
from watcher.web.app import Pages, as_json, page_url, stream_overview
from watcher.web.cells import row_cells
from watcher.web.context import WebContext
from watcher.web.deprecations import collect_deprecations
from watcher.web.overview import FOLD_AT, Cell, ServerRow, collect_overview
from watcher.web.run_page import collect_run


def test_columns_cells_and_ages(tmp_path: Path):
    config = tmp_path / "watcher.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "state": str(tmp_path / "state.db"),
                "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
                "teams": [{"name": "books", "slack_channel": "#b"}, {"name": "maps", "slack_channel": "#m"}],
                "servers": [library_server(), library_server(name="atlas", team="maps")],
            }
        )
    )
    loaded = load_config(config)
    store = Store(tmp_path / "state.db")
    for version, pre, baseline in (("2.2.0", 0, 1), ("2.3.0", 0, 1), ("2.4.0a1", 1, 1), ("2.4.0b1", 1, 0)):
        row = {"sdk": "python", "registry": "pypi", "package": "mcp", "version": version, "prerelease": pre}
        store.db["versions"].insert({**row, "yanked": 0, "published": None, "first_seen": None, "baseline": baseline})
    store.queue_run("library", "python", "2.4.0b1", "release")
    store.queue_run("atlas", "python", "2.4.0b1", "release")
    store.queue_run("atlas", "python", "2.3.0", "baseline")
    store.queue_run("library", "python", "2.3.0", "baseline")
    first = store.claim_run()
    assert first is not None
    store.finish_run(first["id"], "fail", {"reasons": []}, 3.0)
    second = store.claim_run()
    assert second is not None
    store.interrupt_run(second["id"])
    times = {"queued": "2026-11-29T09:00:00Z", "started": "2026-11-29T11:00:00Z", "finished": "2026-11-28T12:00:00Z"}
    store.db.execute("update runs set queued = ?, started = ?, finished = ?", list(times.values()))

    overview = collect_overview(WebContext(loaded, store, now=lambda: NOW))
    [matrix] = overview.matrices
    # The baseline, the newest stable, and the pre-release first seen after the baseline; not 2.2.0 nor 2.4.0a1.
    assert [(c.version, c.roles) for c in matrix.columns] == [
        ("2.3.0", ["baseline", "newest stable", "tested"]),
        ("2.4.0b1", ["pre-release", "tested"]),
    ]
    cells = {(t.team, r.server): [(c.state, c.age) for c in r.cells] for t in matrix.teams for r in t.servers}
    assert cells == {
        ("books", "library"): [("queued", "3 h"), ("fail", "24 h")],
        ("maps", "atlas"): [("queued", "3 h"), ("interrupted", "24 h")],
    }
    assert [(r.server, r.state) for r in overview.queued] == [
        ("atlas", "interrupted"),
        ("atlas", "queued"),
        ("library", "queued"),
    ]
    assert overview.running == []
    assert overview.generated == "2026-11-29T12:00:00Z"


def _config(tmp_path: Path, servers: list[dict], teams: list[str] = ("books", "maps")) -> LoadedConfig:
    config = tmp_path / "watcher.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "state": str(tmp_path / "state.db"),
                "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
                "teams": [{"name": t, "slack_channel": f"#{t}"} for t in teams],
                "servers": servers,
            }
        )
    )
    return load_config(config)


def _version(store: Store, version: str, prerelease: bool, baseline: bool) -> None:
    row = {"sdk": "python", "registry": "pypi", "package": "mcp", "version": version, "prerelease": int(prerelease)}
    store.db["versions"].insert({**row, "yanked": 0, "published": None, "first_seen": None, "baseline": int(baseline)})


def test_one_banner_per_real_condition_worded_for_the_page(tmp_path: Path):
    loaded = _config(tmp_path, [library_server()])
    store = Store(tmp_path / "state.db")
    ctx = WebContext(loaded, store, now=lambda: NOW)
    fresh = collect_overview(ctx).banners
    assert fresh == [
        "The spec source has not been read yet: the next earliest removal is unknown.",
        "No SDK source has been polled yet: the matrix has no pre-release columns until the first poll.",
    ]
    store.record_poll("python", "sdk", NOW, False, "cannot resolve host")
    store.record_poll("spec", "spec", NOW, False, "cannot read the registry: HTTP 503")
    failing = collect_overview(ctx).banners
    assert failing == [
        "The spec source could not be read (cannot read the registry: HTTP 503) and no earlier copy exists: "
        "the next earliest removal is unknown.",
        "1 of 1 SDK sources failed at their last poll: a new version there goes unseen until they are read again "
        "(see Sources).",
    ]
    html = Pages(ctx, Access(None, False)).index(Request({"type": "http", "query_string": b"", "headers": []}))
    text = bytes(html.body).decode()
    assert "unknown: the spec registry has not been read" in text and "none scheduled" not in text
    for wrong in ("the list below", "stays in use"):  # nothing on / is a list of deprecations, and no copy exists
        assert all(wrong not in b for b in failing) and wrong not in text
    line = collect_overview(ctx).sources_line
    assert (line.total, line.ok, line.failing) == (2, 0, 2)
    assert [(g.sources, g.error) for g in line.groups] == [
        (["python"], "cannot resolve host"),
        (["spec"], "cannot read the registry: HTTP 503"),
    ]


def test_a_prerelease_older_than_the_newest_stable_is_not_called_newer(tmp_path: Path):
    loaded = _config(tmp_path, [library_server()])
    store = Store(tmp_path / "state.db")
    for version, pre in (("2.0.0rc1", True), ("2.2.0", False), ("2.3.0", False)):
        _version(store, version, pre, True)
    [python] = collect_overview(WebContext(loaded, store, now=lambda: NOW)).sources
    assert (python.newest_stable, python.newest_prerelease, python.older_prerelease) == ("2.3.0", None, "2.0.0rc1")


def test_many_servers_fold_per_team_and_a_team_or_a_search_shows_rows(tmp_path: Path):
    count = FOLD_AT + 10
    servers = [library_server(name=f"s{i:03d}", team="books" if i % 2 else "maps") for i in range(count)]
    loaded = _config(tmp_path, servers)
    store = Store(tmp_path / "state.db")
    _version(store, "2.3.0", False, True)
    _version(store, "2.4.0b1", True, False)
    for i in range(0, count, 3):
        store.queue_run(f"s{i:03d}", "python", "2.4.0b1", "release:python:2.4.0b1")
    while (run := store.claim_run()) is not None:
        store.finish_run(run["id"], "pass" if run["id"] % 2 else "fail", {"reasons": []}, 1.0)
    ctx = WebContext(loaded, store, now=lambda: NOW)

    whole = collect_overview(ctx)
    assert whole.selection.folded and all(not m.teams for m in whole.matrices)
    summaries = {t.team: t for t in whole.team_summaries}
    assert {t: s.servers for t, s in summaries.items()} == {"books": count // 2, "maps": count - count // 2}
    ran = len(range(0, count, 3))
    assert sum(s.counts.get("pass", 0) + s.counts.get("fail", 0) for s in summaries.values()) == ran
    assert sum(sum(s.counts.values()) for s in summaries.values()) == count * 2  # two columns: 2.3.0, 2.4.0b1

    team = collect_overview(ctx, team="maps")
    assert not team.selection.folded and team.selection.shown == count - count // 2
    rows = [r for m in team.matrices for t in m.teams for r in t.servers]
    assert {r.team for r in rows} == {"maps"} and len(rows) == team.selection.shown
    cells = {(r.server, c.version): c.state for r in rows for c in r.cells}
    assert cells[("s000", "2.4.0b1")] in ("pass", "fail") and cells[("s000", "2.3.0")] == "not-run"

    one_team = [library_server(name=f"t{i:03d}", team="books") for i in range(count)]
    (tmp_path / "big").mkdir()
    big = WebContext(_config(tmp_path / "big", one_team), Store(tmp_path / "big" / "state.db"), now=lambda: NOW)
    assert collect_overview(big).selection.folded and not collect_overview(big, team="books").selection.folded

    found = collect_overview(ctx, query="S01")
    shown = [r.server for m in found.matrices for t in m.teams for r in t.servers]
    assert sorted(shown) == [f"s01{i}" for i in range(10)] and found.selection.shown == 10
    assert collect_overview(ctx, fold=False).selection.folded is False


def test_check_runs_show_on_the_page_with_their_trigger(tmp_path: Path):
    loaded = _config(tmp_path, [library_server()])
    store = Store(tmp_path / "state.db")
    _version(store, "2.3.0", False, True)
    store.queue_run("library", "python", "2.3.0", "cli")
    run = store.claim_run()
    assert run is not None
    store.finish_run(run["id"], "pass", {"reasons": []}, 1.0)
    ctx = WebContext(loaded, store, now=lambda: NOW)
    overview = collect_overview(ctx)
    [cell] = [c for m in overview.matrices for t in m.teams for r in t.servers for c in r.cells]
    assert (cell.state, cell.run_id, cell.trigger) == ("pass", run["id"], "cli")
    assert [(r.run_id, r.trigger) for r in overview.recent] == [(run["id"], "cli")]
    html = row_cells(overview.matrices[0].teams[0].servers[0])
    assert 'data-trigger="cli"' in html and "· cli</small>" in html
    page = collect_run(ctx, run["id"])
    assert page is not None and page.trigger_label == "cli"


def test_a_passing_run_says_a_word_about_a_traceback_on_stderr(tmp_path: Path):
    loaded = _config(tmp_path, [library_server()])
    store = Store(tmp_path / "state.db")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "server.stderr.log").write_text(
        'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: ignored by the server\n'
    )
    ctx = WebContext(loaded, store, now=lambda: NOW)
    notes = {}
    for verdict in ("pass", "fail"):
        store.queue_run("library", "python", f"2.3.{int(verdict == 'fail')}", "release:python:x")
        run = store.claim_run()
        assert run is not None
        store.finish_run(run["id"], verdict, {"reasons": [], "run_dir": str(run_dir)}, 1.0)
        page = collect_run(ctx, run["id"])
        assert page is not None
        [stderr] = [log for log in page.logs if log.title.startswith("server stderr")]
        notes[verdict] = stderr.note
    assert notes["pass"] == (
        "The server wrote this traceback to stderr; the run passed (no check failed and the server kept serving)."
    )
    assert notes["fail"] is None


def test_failing_sources_with_one_cause_are_one_line(tmp_path: Path):
    sdks = [{"name": n, "registry": "npm", "package": f"@scope/{n}"} for n in ("core", "node", "express", "sdk")]
    config = tmp_path / "watcher.yaml"
    config.write_text(
        yaml.safe_dump({"state": str(tmp_path / "state.db"), "sdks": sdks, "teams": [], "servers": []}),
        encoding="utf-8",
    )
    store = Store(tmp_path / "state.db")
    for name in ("core", "node", "express"):
        store.record_poll(name, "sdk", NOW, False, f"https://registry.test/@scope%2f{name}: DNS lookup failed")
    store.record_poll("sdk", "sdk", NOW, True, None)
    store.record_poll("spec", "spec", NOW, True, None)
    line = collect_overview(WebContext(load_config(config), store, now=lambda: NOW)).sources_line
    assert (line.total, line.ok, line.failing, line.never) == (5, 2, 3, 0)
    assert [(g.sources, g.error) for g in line.groups] == [
        (["core", "node", "express"], "https://registry.test/…: DNS lookup failed")
    ]


def test_a_failed_spec_read_beside_an_earlier_copy_says_where_the_dates_come_from(tmp_path: Path):
    with FakeGitHub() as gh:
        serve_spec(gh)
        config = tmp_path / "watcher.yaml"
        data = {**spec_config(gh), "state": str(tmp_path / "state.db"), "servers": []}
        data["sdks"] = [{"name": "python", "registry": "pypi", "package": "mcp"}]
        config.write_text(yaml.safe_dump(data), encoding="utf-8")
        loaded = load_config(config)
        store = Store(tmp_path / "state.db")
        assert spec_poll(loaded, store, NOW.date().isoformat()).get("ok")
    store.record_poll("python", "sdk", NOW, True, None)
    two_hours_ago = NOW - timedelta(hours=2)
    store.record_poll(
        "spec", "spec", two_hours_ago, False, "cannot read the registry: HTTP 502", finished=two_hours_ago
    )
    overview = collect_overview(WebContext(loaded, store, now=lambda: NOW))
    [banner] = overview.banners
    saved = store.get_kv("spec.registry.last_good")["saved"]
    assert banner == (
        "The spec source failed at its last read, 2 h ago (cannot read the registry: HTTP 502): the removal dates "
        f"come from the copy read {saved}."
    )
    assert overview.outlook.registry_known and overview.outlook.next_removal == "2027-03-30"


def test_the_streamed_api_is_the_overview_as_json(tmp_path: Path):
    servers = [library_server(name=f"s{i}", team=("books", "maps")[i % 2]) for i in range(5)]
    loaded = _config(tmp_path, servers)
    store = Store(tmp_path / "state.db")
    _version(store, "2.3.0", False, True)
    _version(store, 'b"1<', True, False)  # a version a registry named with quotes and markup
    store.queue_run("s1", "python", 'b"1<', "cli")
    run = store.claim_run()
    assert run is not None
    store.finish_run(run["id"], "fail", {"reasons": []}, 1.0)
    store.queue_run("s2", "python", "2.3.0", "release:python:2.3.0")
    overview = collect_overview(WebContext(loaded, store, now=lambda: NOW), fold=False)
    pieces = list(stream_overview(overview))
    assert json.loads(b"".join(pieces)) == json.loads(json.dumps(as_json(overview)))
    assert sum(len(p) for p in pieces) > 0 and len(overview.matrices[0].teams) == 2


def test_the_page_address_the_start_up_log_names():
    assert page_url("127.0.0.1", 8765) == "http://127.0.0.1:8765/"
    assert page_url("::1", 8765) == "http://[::1]:8765/"
    assert page_url("0.0.0.0", 80) == "http://localhost:80/ (listening on every address)"


def test_the_deprecations_page_words_the_spec_source_for_its_table(tmp_path: Path):
    loaded = _config(tmp_path, [library_server()])
    store = Store(tmp_path / "state.db")
    ctx = WebContext(loaded, store, now=lambda: NOW)
    empty = "the table below is empty because nothing is known, not because nothing is deprecated."
    assert collect_deprecations(ctx, NOW.date()).problems == [f"The spec source has not been read yet: {empty}"]
    store.record_poll("spec", "spec", NOW, False, "cannot read the registry: HTTP 503", finished=NOW)
    store.set_kv("spec.alerts", {"registry": {"error": "cannot read the registry: HTTP 503", "episode": 1}})
    problems = collect_deprecations(ctx, NOW.date()).problems
    assert problems == [
        f"The spec source could not be read (cannot read the registry: HTTP 503) and no earlier copy exists: {empty}"
    ]
    assert not any("stays in use" in p or "last good copy" in p for p in problems)  # there is no copy


def test_a_cell_says_its_age_is_an_age_not_a_duration():
    """Issue 37: "pass 69 s" read as the run's duration; it is how long ago it finished (queued, started)."""
    cells = [
        Cell("2.4.0b1", "pass", 7, "69 s", "2026-11-29T11:58:51Z", "release"),
        Cell("2.4.0b2", "running", 8, "3 min", "2026-11-29T11:57:00Z", "release"),
        Cell("2.4.0b3", "queued", 9, "12 min", "2026-11-29T11:48:00Z", "release"),
    ]
    html = str(row_cells(ServerRow("library", "books", cells)))
    small = re.findall(r"<small>(.*?)</small>", html)
    assert small == ["69 s ago", "started 3 min ago", "queued 12 min ago"]


def test_an_unknown_team_in_the_filter_is_named_not_counted(tmp_path: Path):
    """Issue 37: `/?team=nosuch` said "0 of 3 servers" as if the team existed and had none."""
    loaded = _config(tmp_path, [library_server(), library_server(name="atlas", team="maps")])
    ctx = WebContext(loaded, Store(tmp_path / "state.db"), now=lambda: NOW)
    pages = Pages(ctx, Access(None, False))

    def count_text(query: bytes) -> str:
        html = bytes(pages.index(Request({"type": "http", "query_string": query, "headers": []})).body).decode()
        [count] = re.findall(r'<span class="count">(.*?)</span>', html, re.S)
        return re.sub(r"<[^>]+>", "", count).strip()

    assert count_text(b"team=nosuch") == "no team nosuch · all"
    assert count_text(b"team=maps") == "1 of 2 servers · all"
    assert count_text(b"") == "2 of 2 servers"
    assert collect_overview(ctx, team="nosuch").selection.team_known is False
    assert collect_overview(ctx, team="maps").selection.team_known is True
