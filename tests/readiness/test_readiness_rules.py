"""The readiness rules without a suite run: which sets are new and what they count toward, how the CLI is asked,
which SDK version runs, the things to fix, RC windows, the team's thread and the candidate comparison."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tests.suites.helpers import check, library_server, library_ts_server, write_config
from watcher.config import LoadedConfig
from watcher.core.store import Store
from watcher.core.store_schema import VersionRow
from watcher.readiness.candidate import differences
from watcher.readiness.cycle import close_released, outcome_of, update_windows
from watcher.readiness.judge import to_fix
from watcher.readiness.notices import candidate_notice, team_readiness_notice
from watcher.readiness.plan import cli_arguments, new_sets, sdk_version_for, target_of
from watcher.readiness.view import KV_RESULTS, collect_readiness, digest_line
from watcher.spec.calendar import ReleaseCalendar
from watcher.spec.revisions import SpecRevision

TODAY = date(2026, 12, 1)
CALENDAR = ReleaseCalendar()
RELEASED = [SpecRevision("2026-07-28", "2026-07-28", date(2026, 7, 28), prerelease=False)]


def setup(tmp_path: Path) -> tuple[LoadedConfig, Store]:
    servers = [library_server(requirements=["2026-07-28"]), library_ts_server(requirements=[])]
    loaded = write_config(tmp_path, servers, tmp_path / "envs")
    return loaded, Store(loaded.resolve(loaded.config.state))


def version(store: Store, sdk: str, number: str, prerelease: bool, yanked: bool = False) -> None:
    registry = "pypi" if sdk == "python" else "npm"
    store.add_version(
        VersionRow(
            sdk=sdk,
            registry=registry,
            package="mcp",
            version=number,
            prerelease=int(prerelease),
            yanked=int(yanked),
            published=None,
            first_seen="2026-11-20T10:00:00Z",
            baseline=0,
        )
    )


def test_draft_counts_toward_the_next_projected_revision() -> None:
    draft = target_of("draft", CALENDAR, RELEASED, TODAY)
    assert draft is not None and (draft.revision, draft.release) == ("2027-03-30", date(2027, 3, 30))
    dated = target_of("2027-09-28", CALENDAR, RELEASED, TODAY)
    assert dated is not None and dated.release == date(2027, 9, 28)


def test_an_rc_names_the_revision_draft_counts_toward() -> None:
    rc = SpecRevision("2027-03-24-RC", "2027-03-24", date(2027, 3, 1), prerelease=True)
    draft = target_of("draft", CALENDAR, [*RELEASED, rc], TODAY)
    assert draft is not None and draft.revision == "2027-03-24"


def test_new_sets_leave_out_sets_a_server_runs_and_released_revisions(tmp_path: Path) -> None:
    loaded, _ = setup(tmp_path)
    sets = ["2025-11-25", "2026-07-28", "draft", "2027-03-30"]
    found = new_sets(loaded.config, sets, CALENDAR, RELEASED, TODAY)
    assert [(t.set_name, t.revision) for t in found] == [("2027-03-30", "2027-03-30"), ("draft", "2027-03-30")]


def test_a_dated_set_is_asked_by_name_and_draft_the_way_the_cli_allows() -> None:
    assert cli_arguments("2027-03-30") == ["--requirements", "2027-03-30"]
    assert cli_arguments("draft") == ["--spec-version", "draft", "--suite", "all"]


def test_the_sdk_version_is_the_newest_prerelease_else_the_newest_release(tmp_path: Path) -> None:
    loaded, store = setup(tmp_path)
    python, typescript = loaded.config.servers
    assert sdk_version_for(loaded.config, store, python) is None
    version(store, "python", "2.3.0", False)
    version(store, "python", "2.2.0rc1", True)  # older than the release: not the one to get ready on
    assert sdk_version_for(loaded.config, store, python) == "2.3.0"
    version(store, "python", "2.4.0b1", True)
    version(store, "python", "2.5.0b1", True, yanked=True)
    assert sdk_version_for(loaded.config, store, python) == "2.4.0b1"
    assert sdk_version_for(loaded.config, store, typescript) is None


def test_things_to_fix_name_scenario_checks_and_spec_links() -> None:
    failing = check("tools-call-x", "FAILURE", "no such tool")
    failing["specReferences"] = [
        {"id": "MCP-Tools", "url": "https://modelcontextprotocol.io/specification/draft/server/tools"},
        {"id": "bad", "url": "javascript:alert(1)"},
        {"id": "elsewhere", "url": "https://evil.example/login"},
        {"id": "look-alike", "url": "https://modelcontextprotocol.io.evil.example/x"},
    ]
    results = {"tools-call": [check("a", "SUCCESS"), failing], "ping": [check("ping", "SUCCESS")]}
    [item] = to_fix(results, ["tools-call"])
    assert item == {
        "scenario": "tools-call",
        "checks": ["tools-call-x"],
        "message": "no such tool",
        "spec": ["https://modelcontextprotocol.io/specification/draft/server/tools"],
    }
    [missing] = to_fix({}, ["resources-read"])
    assert missing["message"] == "the suite wrote no results for this scenario"


def test_an_rc_opens_a_window_with_every_server_not_yet_testable_and_the_release_closes_it(tmp_path: Path) -> None:
    loaded, store = setup(tmp_path)
    rc = SpecRevision("2027-03-30-RC", "2027-03-30", date(2027, 2, 20), prerelease=True)
    update_windows(store, [*RELEASED, rc])
    [window] = collect_readiness(loaded.config, store, TODAY)
    shown = (window.revision, window.opened_by, window.days_left, window.sets)
    assert shown == ("2027-03-30", "2027-03-30-RC", 119, [])
    assert {s.status for s in window.servers} == {"not_testable"}
    assert digest_line(window, "books") == "Ready for 2027-03-30: 0 of 2 servers; yours: not yet testable"

    entry = {"status": "ready", "to_fix": [], "sdk_version": "2.3.0", "suite_version": "0.2.0-alpha.13"}
    stored = {"revision": "2027-03-30", "release": "2027-03-30", "servers": {"library": entry}}
    store.set_kv(KV_RESULTS, {"draft": stored})
    final = SpecRevision("2027-03-30", "2027-03-30", date(2027, 3, 30), prerelease=False)
    update_windows(store, [*RELEASED, rc, final])
    assert close_released(store, [*RELEASED, rc, final]) == {}
    assert collect_readiness(loaded.config, store, date(2027, 3, 31)) == []


def test_a_team_hears_first_readiness_then_only_changes_in_one_thread(tmp_path: Path) -> None:
    loaded, store = setup(tmp_path)
    item = {"scenario": "tools-call", "checks": ["x"], "message": "m", "spec": ["https://example.org/spec"]}
    first = {"status": "to_fix", "to_fix": [item], "sdk_version": "2.4.0b1", "suite_version": "0.2.0-alpha.13"}
    assert team_readiness_notice(store, loaded.config, "books", "2027-03-30", "2027-03-30", {"library": first})
    fixed = {**first, "status": "ready", "to_fix": [], "sdk_version": "2.4.0b2"}
    assert outcome_of(first) != outcome_of(fixed)
    assert team_readiness_notice(store, loaded.config, "books", "2027-03-30", "2027-03-30", {"library": fixed})
    assert not team_readiness_notice(store, loaded.config, "books", "2027-03-30", "2027-03-30", {"library": fixed})
    rows = [r for r in store.outbox() if r["kind"] == "readiness"]
    assert [r["thread_of"] for r in rows] == [None, "readiness:2027-03-30:books"]
    assert "1 to fix" in rows[0]["text"] and "tools-call" in rows[0]["text"] and "ready on 2.4.0b2" in rows[1]["text"]


def report(revision: str, ok: bool, unexpected: list[str]) -> dict[str, object]:
    return {"requirements": revision, "ok": ok, "unexpected_failures": unexpected}


def test_a_candidate_suite_that_judges_a_server_apart_is_reported_once_with_both_results(tmp_path: Path) -> None:
    loaded, store = setup(tmp_path)
    pinned = [report("2026-07-28", True, []), report("2025-11-25", False, ["ping"])]
    candidate = [report("2026-07-28", False, ["tools-call-with-progress"]), report("2025-11-25", False, ["ping"])]
    names = ("0.2.0-alpha.12", "0.2.0-alpha.13")
    lines = differences(pinned, candidate, names)  # type: ignore[arg-type]
    assert lines == [
        "2026-07-28: 0.2.0-alpha.12 passes, 0.2.0-alpha.13 fails; "
        "0.2.0-alpha.13 fails tools-call-with-progress which 0.2.0-alpha.12 passed"
    ]
    assert differences(pinned, pinned, names) == []  # type: ignore[arg-type]
    assert candidate_notice(store, loaded.config, "library", *names, lines) == 1
    assert candidate_notice(store, loaded.config, "library", *names, lines) == 0
    [row] = [r for r in store.outbox() if r["kind"] == "readiness-candidate"]
    assert "0.2.0-alpha.13 judges library differently from 0.2.0-alpha.12" in row["text"]


def test_the_readiness_command_prints_what_the_state_holds_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from watcher.cli import main

    loaded, store = setup(tmp_path)
    item = {"scenario": "tools-call", "checks": ["x"], "message": "no such tool", "spec": ["https://example.org/s"]}
    entry = {"status": "to_fix", "to_fix": [item], "sdk_version": "2.4.0b1", "suite_version": "0.2.0-alpha.13"}
    store.set_kv(
        KV_RESULTS, {"draft": {"revision": "2027-03-30", "release": "2027-03-30", "servers": {"library": entry}}}
    )
    store.close()
    config = str(loaded.path)
    assert main(["--config", config, "readiness", "--offline", "--today", "2026-12-01"]) == 0
    out = capsys.readouterr().out
    assert "2027-03-30: 0 of 2 servers ready, projected release 2027-03-30 (119 days)" in out
    assert "library (books): 1 to fix; SDK 2.4.0b1, suite 0.2.0-alpha.13" in out
    assert "- tools-call: no such tool <https://example.org/s>" in out
    assert "library-ts (books): not yet testable" in out
