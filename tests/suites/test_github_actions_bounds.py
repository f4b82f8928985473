"""CI artifacts are outside data: a zip bomb served by the loopback GitHub (a ~600 KB artifact whose report.json
inflates to 600 MiB) is an `error` result with the reason; the watcher's memory stays bounded, nothing of the
artifact is kept and the state database does not grow. Every cap is refused before reading where the zip
declares sizes, and while reading where it streams."""

from __future__ import annotations

import io
import json
import resource
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.github_actions import RunPlan, zip_of
from tests.fakes.github_server import FakeGitHub
from tests.suites.test_github_actions import REPO, TOKEN, VERSION, WORKFLOW, ci_report, config
from watcher.core.store import Store
from watcher.suites.worker import process_queue, queue_for_release

BOMB_MIB = 600


@pytest.fixture
def gh(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("BOOKS_GH_TOKEN", TOKEN)
    with FakeGitHub() as fake:
        fake.actions.token = TOKEN
        yield fake


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """A zip whose report.json (a valid report padded with spaces) inflates to BOMB_MIB MiB, built in small pieces."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open("report.json", "w", force_zip64=True) as handle,
    ):
        handle.write(b'{"server": "books-ci", "sdk_version": "2.4.0b1", "verdict": "pass", "pad": "')
        piece = b" " * (1 << 20)
        for _ in range(BOMB_MIB):
            handle.write(piece)
        handle.write(b'"}')
    data = buffer.getvalue()
    assert len(data) < 1024 * 1024
    return data


def _db_bytes(folder: Path) -> int:
    """The state database with its write-ahead log (where SQLite writes first)."""
    return sum(p.stat().st_size for p in folder.glob("state.db*"))


def _peak_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _run(tmp_path: Path, gh: FakeGitHub, artifact: bytes, **executor: Any) -> tuple[dict[str, Any], Store, int]:
    gh.actions.add_workflow(REPO, WORKFLOW, RunPlan(artifact_bytes=artifact))
    loaded = config(tmp_path, gh, **executor)
    store = Store(tmp_path / "state.db")
    queue_for_release(loaded, store, "python", VERSION, prerelease=True)
    before = _db_bytes(tmp_path)
    [outcome] = process_queue(loaded, store)
    return outcome["report"], store, before


@pytest.mark.parametrize(
    ("executor", "reason"),
    [
        ({}, "would inflate to 629,145,6"),
        ({"max_inflated_bytes": 2**40}, "report.json declares 629,145,6"),
        ({"max_artifact_bytes": 100_000}, "over executor.max_artifact_bytes (100,000)"),
    ],
)
def test_a_zip_bomb_artifact_is_an_error_with_the_reason_and_nothing_of_it_is_kept(
    tmp_path: Path, gh: FakeGitHub, bomb: bytes, executor: dict[str, Any], reason: str
):
    peak = _peak_kib()
    report, store, db_before = _run(tmp_path, gh, bomb, **executor)
    grown_mib = (_peak_kib() - peak) / 1024
    assert report["verdict"] == "error"
    assert reason in report["reasons"][0]["reason"], report["reasons"]
    assert grown_mib < 64, f"memory grew by {grown_mib:.0f} MiB reading a {len(bomb):,}-byte artifact"
    assert _db_bytes(tmp_path) - db_before < 512 * 1024
    run_dir = Path(report["run_dir"])
    assert not (run_dir / "artifact.zip").exists()
    assert (run_dir / "report.json").stat().st_size < 64 * 1024
    [row] = store.outbox()
    assert row["text"].startswith("ERROR: books-ci could not be checked")


def test_an_artifact_served_by_the_api_itself_is_capped_too(tmp_path: Path, gh: FakeGitHub, bomb: bytes):
    gh.actions.direct_download = True
    report, _, _ = _run(tmp_path, gh, bomb, max_artifact_bytes=100_000)
    assert report["verdict"] == "error"
    assert "over executor.max_artifact_bytes (100,000)" in report["reasons"][0]["reason"]
    assert not (Path(report["run_dir"]) / "artifact.zip").exists()


def test_a_report_over_its_cap_while_reading_is_refused(tmp_path: Path, gh: FakeGitHub):
    padded = ci_report("pass", pad="x" * 50_000)

    report, _, _ = _run(tmp_path, gh, zip_of({"report.json": json.dumps(padded).encode()}), max_report_bytes=10_000)
    assert report["verdict"] == "error"
    assert "over executor.max_report_bytes (10,000)" in report["reasons"][0]["reason"]


def test_ci_reasons_are_posted_escaped(tmp_path: Path, gh: FakeGitHub):
    hostile = ci_report(
        "fail", reasons=[{"verdict": "fail", "reason": "<!channel> see <https://evil.example|the fix>"}]
    )

    report, store, _ = _run(tmp_path, gh, zip_of({"report.json": json.dumps(hostile).encode()}))
    assert report["verdict"] == "fail"
    [row] = store.outbox()
    shown = row["text"] + json.dumps(row["blocks"])
    assert "<!channel>" not in shown and "<https://evil" not in shown
    assert "&lt;!channel&gt;" in shown


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'"pass"', "report.json:1: expected a mapping at the top level, found a single text value"),
        (b'{"verdict": "pass", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "report.json: nested deeper than 64"),
    ],
    ids=["bare scalar", "nested 100,000 deep"],
)
def test_a_report_of_the_wrong_shape_or_nested_deep_is_an_error_naming_it(
    tmp_path: Path, gh: FakeGitHub, body: bytes, reason: str
):
    report, _, _ = _run(tmp_path, gh, zip_of({"report.json": body}), max_report_bytes=1 << 20)
    assert report["verdict"] == "error"
    assert f"the artifact is not a check report: {reason}" in report["reasons"][0]["reason"]
