"""The run report across versions: reports stored and CI artifacts written by release e8aec50 (recorded on that
release: tests/fixtures/reports_e8aec50/README.md) load through the store, the run folder's reader and the
github-actions executor; what this release writes carries its version; anything else is refused by name."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from watcher.core.contract_doc import ContractDocError, load_contract_diff
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


# --- the parts e8aec50 wrote that the run cases above leave out (record_parts.py) ---------------------------------


def _recorder() -> ModuleType:
    """record_parts.py, the recorder of the part fixtures: run here on this release, it makes them again."""
    spec = importlib.util.spec_from_file_location("record_parts", OLD / "record_parts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _part(name: str) -> Any:
    return json.loads((OLD / name).read_text(encoding="utf-8"))


def test_a_steered_contract_part_of_e8aec50_loads_with_every_field_typed():
    part = _part("part_contract_steered.json")
    report = load_report({"verdict": "fail", "contract": part}, "r")
    contract = report.get("contract")
    assert contract is not None and contract == part  # handed back as it is
    assert [c.get("rule") for c in contract.get("changes", [])] == [
        "type_changed",
        "required_parameter_added",
        "tool_removed",
    ]
    regraded = contract["changes"][1]
    assert (regraded.get("grade"), regraded.get("originalGrade"), regraded.get("breaksClients")) == (
        "models",
        "breaking",
        False,
    )
    [accepted] = contract.get("accepted", [])
    assert accepted.get("accepted") == {"reason": "reworded on purpose", "expires": "2027-01-31", "by": "books team"}
    assert [c.get("rule") for c in contract.get("ignored", [])] == ["tool_added"]
    assert [c.get("rule") for c in contract.get("lints", [])] == ["removed_without_deprecation"]
    acceptance = contract["acceptance"]
    assert [e.get("name") for e in acceptance.get("stale", [])] == ["gone_long_ago"]
    assert [e.get("by", "absent") for e in acceptance.get("expired", [])] == [None]  # model_dump keeps the None
    slack = acceptance.get("slack", {})
    assert slack.get("entries") == 1 and [s["by"] for s in slack.get("shadowed", [])] == ["alice"]
    assert contract.get("summary") == {
        "total": 3,
        "breaksClients": 2,
        "affectsModels": 3,
        "dangerous": 0,
        "lints": 1,
        "accepted": 1,
    }
    assert load_contract_diff(part, "part") == part


def test_the_stored_contract_part_is_read_by_its_readers():
    """The e8aec50 part through this release's readers: the accept file it names, its notice lines, its page."""
    from watcher.suites.judge.contract import contract_reason, file_of_report
    from watcher.suites.notices import contract_groups

    part = load_contract_diff(_part("part_contract_steered.json"), "part")
    file = file_of_report(part)
    assert file is not None and file.path == "books/accept.yaml"
    assert [e.label() for e in file.entries] == [
        "description_changed tools/get_item",
        "tool_removed tools/gone_long_ago",
        "type_changed tools/get_item inputSchema.properties.q",
    ]
    assert contract_reason(part) == "contract: 2 change(s) that break clients"
    breaking, models, others = contract_groups(part)
    assert (len(breaking), len(models), others) == (2, 1, 0)


def test_this_release_steers_a_contract_as_e8aec50_did(tmp_path: Path):
    """The recorder's inputs through this release's functions: the same document, key for key and in order."""
    made = _recorder().contract_part(tmp_path)
    expected = _part("part_contract_steered.json")
    assert json.dumps(made, indent=2) == json.dumps(expected, indent=2)


def test_a_readiness_run_of_e8aec50_loads_its_step_and_its_stored_results(tmp_path: Path):
    from watcher.readiness.model import KV_RESULTS, stored_results

    report = load_report(_part("part_readiness_report.json"), "r")
    step = report.get("step")
    assert step is not None and step.get("set") == "2027-03-30" and step.get("passed") == 1
    assert [(i["scenario"], i["checks"]) for i in step.get("to_fix", [])] == [
        ("elicitation-form", ["elicitation-form"]),
        ("sampling-create", ["sampling-answer", "sampling-request"]),
    ]
    store = Store(tmp_path / "state.db")
    stored = _part("part_readiness_results.json")
    store.set_kv(KV_RESULTS, stored)
    results = stored_results(store)
    assert results == stored
    servers = results["2027-03-30"]["servers"]
    assert servers["library"].get("status") == "to_fix" and servers["books"].get("sdk_version") is None


def test_this_release_writes_a_readiness_step_and_its_results_as_e8aec50_did():
    report, results = _recorder().readiness_parts()
    assert report == _part("part_readiness_report.json") and results == _part("part_readiness_results.json")


@pytest.mark.parametrize(
    ("part", "named"),
    [
        (
            {"contract": {"changes": [{"rule": "tool_removed", "breaksClients": "sometimes"}]}},
            "contract.changes.0.breaksClients: Input should be a valid boolean",
        ),
        ({"contract": {"acceptance": {"stale": [{"expires": 20270131}]}}}, "contract.acceptance.stale.0.expires"),
        ({"contract": {"summary": {"total": "three"}}}, "contract.summary.total"),
        ({"snapshot": {"eras": {"legacy": {"counts": {"tools": "many"}}}}}, "snapshot.eras.legacy.counts.tools"),
        ({"step": {"to_fix": [{"scenario": "s", "checks": "c", "message": "", "spec": []}]}}, "step.to_fix.0.checks"),
        ({"step": {"pinned": [{"ok": "maybe"}]}}, "step.pinned.0.ok"),
    ],
)
def test_a_malformed_part_is_refused_naming_its_field(part: dict[str, object], named: str):
    with pytest.raises(ReportError) as caught:
        load_report({"verdict": "fail", **part}, "the-report.json")
    assert str(caught.value).startswith(f"the-report.json: {named}")


def test_malformed_readiness_results_and_diff_documents_are_refused_naming_the_field(tmp_path: Path):
    from watcher.readiness.model import KV_RESULTS, stored_results

    store = Store(tmp_path / "state.db")
    store.set_kv(KV_RESULTS, {"2027-03-30": {"servers": {"library": {"to_fix": [{"scenario": 1}]}}}})
    with pytest.raises(ReportError, match=r"2027-03-30\.servers\.library\.to_fix\.0\.scenario"):
        stored_results(store)
    with pytest.raises(ContractDocError, match=r"^diff\.json: changes\.0\.path: "):
        load_contract_diff({"changes": [{"path": 3}]}, "diff.json")
