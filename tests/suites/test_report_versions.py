"""The run report across versions: reports stored and CI artifacts written by release e8aec50 (recorded on that
release: tests/fixtures/reports_e8aec50/README.md) load through the store, the run folder's reader and the
github-actions executor; what this release writes carries its version; anything else is refused by name."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from watcher.core.run_report import REPORT_VERSION, ReportError, load_report
from watcher.core.store import Store
from watcher.suites.runner import read_report

OLD = Path(__file__).resolve().parents[1] / "fixtures" / "reports_e8aec50"
ROWS = sorted(OLD.glob("row_*.json"))


def _rows(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return rows


def _old_store(tmp_path: Path, rows: list[dict[str, Any]]) -> Store:
    """A state whose runs table holds the recorded rows byte for byte (the report column as e8aec50 wrote it)."""
    store = Store(tmp_path / "state.db")
    columns = list(rows[0])
    with sqlite3.connect(tmp_path / "state.db") as db:
        db.executemany(
            f"insert into runs ({', '.join(columns)}) values ({', '.join('?' for _ in columns)})",
            [[row[c] for c in columns] for row in rows],
        )
    return store


def test_the_recorded_rows_are_version_1_reports():
    """The fixtures are what they claim: e8aec50 wrote no report_version, and every case is there."""
    assert [p.stem for p in ROWS] == [
        "row_check_library",
        "row_github_actions",
        "row_install_failed",
        "row_queue_library",
        "row_server_removed",
    ]
    for path in ROWS:
        for row in _rows(path):
            assert "report_version" not in json.loads(row["report"])


@pytest.mark.parametrize("path", ROWS, ids=lambda p: p.stem)
def test_a_run_stored_by_e8aec50_loads_through_the_store(tmp_path: Path, path: Path):
    rows = _rows(path)
    store = _old_store(tmp_path, rows)
    for row in rows:
        loaded = store.run_by_id(row["id"])
        assert loaded is not None and loaded["report"] is not None
        report = loaded["report"]
        stored = json.loads(row["report"])
        assert report == stored and "report_version" not in report  # nothing lost, nothing added or changed
        assert report["verdict"] == row["verdict"]
    assert [r["id"] for r in store.runs()] == sorted((r["id"] for r in rows), reverse=True)


def test_the_parts_of_an_old_report_read_as_typed_parts(tmp_path: Path):
    [row] = _rows(OLD / "row_queue_library.json")
    store = _old_store(tmp_path, [row])
    loaded = store.run_by_id(row["id"])
    assert loaded is not None and loaded["report"] is not None
    report = loaded["report"]
    install, start, timings = report.get("install"), report.get("start"), report.get("timings")
    assert install is not None and install["ok"] is True and install["sdk_version"] == "2.3.0"
    assert start is not None and start["ok"] is True and start["transport"] == "http"
    assert timings is not None and timings["build_seconds"] is not None
    assert report["reasons"] == [] and report["verdict"] == "pass"
    assert {c["requirements"] for c in report["conformance"]} == {"2026-07-28", "2025-11-25"}


def test_a_run_folder_report_json_of_e8aec50_loads(tmp_path: Path):
    text = (OLD / "check_json_library.json").read_text(encoding="utf-8")
    (tmp_path / "report.json").write_text(text, encoding="utf-8")
    report = read_report(tmp_path)
    assert report is not None and report["server"] == "library" and report["verdict"] == "pass"
    assert json.dumps(report, indent=2) + "\n" == text  # its keys in their order: written again, the same bytes


def test_a_ci_artifact_written_by_e8aec50_is_read_by_the_executor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The artifact's report.json as an e8aec50 `check --json` wrote it, through the whole github-actions path
    (dispatch, follow, the bounded artifact reader) against the loopback GitHub, then stored and read back."""
    from tests.fakes.github_actions import RunPlan
    from tests.fakes.github_server import FakeGitHub
    from tests.suites.test_github_actions import REPO, TOKEN, WORKFLOW
    from tests.suites.test_github_actions import config as actions_config
    from watcher.suites.worker import process_queue, queue_for_release

    artifact = json.loads((OLD / "ci_artifact_report.json").read_text(encoding="utf-8"))
    monkeypatch.setenv("BOOKS_GH_TOKEN", TOKEN)
    with FakeGitHub() as gh:
        gh.actions.token = TOKEN
        gh.actions.add_workflow(REPO, WORKFLOW, RunPlan(report=artifact, appear_after=1))
        loaded = actions_config(tmp_path, gh)
        store = Store(tmp_path / "state.db")
        queue_for_release(loaded, store, "python", str(artifact["sdk_version"]), prerelease=True)
        [outcome] = process_queue(loaded, store)
    report = outcome["report"]
    assert report["executor"] == "github-actions" and report["verdict"] == "pass", report.get("reasons")
    assert "report_version" not in report  # the CI's own report, of version 1, taken as it is
    assert report["remote_run_dir"] == artifact["run_dir"]  # the artifact's own report, not an error report
    assert report.get("conformance") == artifact["conformance"] and report.get("contract") == artifact["contract"]
    stored = store.run_by_id(outcome["run_id"])
    assert stored is not None and stored["report"] == report


def test_what_this_release_writes_carries_its_version(tmp_path: Path):
    from tests.suites.helpers import library_server, write_config
    from watcher.suites.worker import process_queue, queue_for_release

    loaded = write_config(tmp_path, [library_server(name="gone", path="/nonexistent/gone")], tmp_path / "envs")
    store = Store(tmp_path / "state.db")
    queue_for_release(loaded, store, "python", "2.4.0b1", prerelease=True)
    [outcome] = process_queue(loaded, store)
    assert outcome["report"]["report_version"] == REPORT_VERSION
    with sqlite3.connect(tmp_path / "state.db") as db:
        [(text,)] = db.execute("select report from runs").fetchall()
    assert json.loads(text)["report_version"] == REPORT_VERSION
    written = json.loads((Path(outcome["report"]["run_dir"]) / "report.json").read_text(encoding="utf-8"))
    assert written["report_version"] == REPORT_VERSION


@pytest.mark.parametrize(
    ("document", "named"),
    [
        ([], "a run report is a JSON object, not list"),
        ({"report_version": 3, "verdict": "pass"}, "report_version 3 is not one this watcher reads"),
        ({"verdict": "pass", "reasons": [{"verdict": "fail"}]}, "reasons.0.reason: Field required"),
        ({"verdict": "pass", "install": {"ok": "sometimes"}}, "install.ok: Input should be a valid boolean"),
        ({"verdict": "pass", "seconds": "soon"}, "seconds"),
    ],
)
def test_a_document_of_no_known_shape_is_refused_naming_the_field(document: object, named: str):
    with pytest.raises(ReportError) as caught:
        load_report(document, "the-report.json")
    assert str(caught.value).startswith("the-report.json: ") and named in str(caught.value)


def test_fields_a_later_version_adds_are_kept():
    report = load_report({"verdict": "pass", "later": {"x": 1}, "install": {"ok": True, "new": 2}}, "r")
    assert report["install"] == {"ok": True, "new": 2} and dict(report)["later"] == {"x": 1}
