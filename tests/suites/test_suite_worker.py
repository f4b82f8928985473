"""The run queue and the threaded result notices (no installs: servers whose project is missing fail fast)."""

from __future__ import annotations

import argparse
import json
import re
import threading
from pathlib import Path

import pytest

from tests.suites.helpers import library_server, library_ts_server, write_config
from watcher.core.store import Store
from watcher.suites import commands
from watcher.suites.notices import conformance_lines, render, result_notice
from watcher.suites.runner import prune_runs
from watcher.suites.worker import process_queue, queue_for_release


def missing_project(name: str, sdk: str = "python") -> dict:
    make = library_server if sdk == "python" else library_ts_server
    return make(name=name, path=f"/nonexistent/{name}")


def test_queue_for_release_queues_every_server_on_that_sdk_once(tmp_path: Path):
    loaded = write_config(
        tmp_path,
        [missing_project("a"), missing_project("b"), missing_project("c", sdk="typescript")],
        tmp_path / "envs",
    )
    store = Store(tmp_path / "state.db")
    assert queue_for_release(loaded, store, "python", "2.4.0b1", prerelease=True) == ["a", "b"]
    assert queue_for_release(loaded, store, "python", "2.4.0b1", prerelease=True) == []
    assert queue_for_release(loaded, store, "python", "2.4.0", prerelease=False) == []
    assert queue_for_release(loaded, store, "typescript", "1.40.0-beta.0", prerelease=True) == ["c"]
    queued = store.runs(status="queued")
    assert sorted((r["server"], r["sdk_version"], r["trigger"]) for r in queued) == [
        ("a", "2.4.0b1", "release:python:2.4.0b1"),
        ("b", "2.4.0b1", "release:python:2.4.0b1"),
        ("c", "1.40.0-beta.0", "release:typescript:1.40.0-beta.0"),
    ]


def test_stable_releases_queue_only_when_configured(tmp_path: Path):
    loaded = write_config(tmp_path, [missing_project("a")], tmp_path / "envs", on_stable=True)
    store = Store(tmp_path / "state.db")
    assert queue_for_release(loaded, store, "python", "2.4.0", prerelease=False) == ["a"]


def test_process_queue_finishes_runs_and_enqueues_threaded_replies(tmp_path: Path):
    loaded = write_config(tmp_path, [missing_project("a"), missing_project("b")], tmp_path / "envs", concurrency=2)
    store = Store(tmp_path / "state.db")
    queue_for_release(loaded, store, "python", "2.4.0b1", prerelease=True)
    outcomes = process_queue(loaded, store)
    assert sorted(o["server"] for o in outcomes) == ["a", "b"]
    assert {o["verdict"] for o in outcomes} == {"fail"}
    done = store.runs(status="done")
    assert len(done) == 2 and all(r["verdict"] == "fail" for r in done)
    assert "project folder does not exist" in done[0]["report"]["install"]["error"]
    rows = store.outbox()
    assert sorted(r["key"] for r in rows) == ["run:a:2.4.0b1:books", "run:b:2.4.0b1:books"]
    for row in rows:
        assert row["thread_of"] == "release:python:2.4.0b1:books"
        assert row["channel"] == "#books-mcp"
        assert row["kind"] == "suite_result"
        assert row["text"].startswith("FAIL: ")
        assert row["blocks"][0]["type"] == "section"
    assert process_queue(loaded, store) == []  # nothing left; a second pass does no work


def test_each_result_is_handed_on_as_its_run_finishes_not_when_the_queue_is_empty(tmp_path: Path):
    loaded = write_config(tmp_path, [missing_project("a"), missing_project("b")], tmp_path / "envs", concurrency=1)
    store = Store(tmp_path / "state.db")
    queue_for_release(loaded, store, "python", "2.4.0b1", prerelease=True)
    seen: list[tuple[str, list[str], int]] = []

    def on_result(outcome: dict) -> None:
        # At this moment the run's own reply is queued, and the other run is still waiting or not done.
        queued = sorted(r["key"] for r in store.outbox())
        seen.append((outcome["server"], queued, len(store.runs(status="done"))))

    outcomes = process_queue(loaded, store, on_result=on_result)
    assert [server for server, _, _ in seen] == [o["server"] for o in outcomes] and len(seen) == 2
    first, second = seen
    assert first[1] == [f"run:{first[0]}:2.4.0b1:books"] and first[2] == 1
    assert len(second[1]) == 2 and second[2] == 2


def test_a_stopped_worker_claims_nothing(tmp_path: Path):
    loaded = write_config(tmp_path, [missing_project("a")], tmp_path / "envs")
    store = Store(tmp_path / "state.db")
    queue_for_release(loaded, store, "python", "2.4.0b1", prerelease=True)
    stop = threading.Event()
    stop.set()
    assert process_queue(loaded, store, stop) == []
    assert len(store.runs(status="queued")) == 1


REPORT = {
    "server": "library",
    "sdk": "python",
    "sdk_package": "mcp",
    "sdk_version": "2.4.0b1",
    "baseline_sdk_version": "2.3.0",
    "verdict": "fail",
    "run_id": "20261129T120000Z-2.4.0b1-abcd",
    "seconds": 83.4,
    "reasons": [{"verdict": "fail", "reason": "conformance 2026-07-28: 1 unexpected failure(s)"}],
    "install": {"ok": True},
    "start": {"ok": True},
    "conformance": [
        {
            "requirements": "2026-07-28",
            "passed": 30,
            "failed": 7,
            "expected_failures": ["tools-call-image:tools-call-image"] * 6,
            "unexpected_failures": ["server-stateless:sep-2575-server-implements-discover"],
            "stale_entries": ["ping:ping"],
            "failure_messages": {"server-stateless:sep-2575-server-implements-discover": "discover missing"},
            "unscored": [{"scenario": "tasks-lifecycle", "reason": "extension", "passed": False}],
        },
        {"requirements": "2025-11-25", "error": "the conformance suite timed out after 600 s"},
    ],
    "contract": {
        "baseline": "2.3.0",
        "candidate": "2.4.0b1",
        "changes": [
            {"list": "tools", "name": "find_book", "kind": "removed", "breaksClients": True, "affectsModels": True},
            {
                "list": "tools",
                "name": "find",
                "path": "description",
                "kind": "description_changed",
                "breaksClients": False,
                "affectsModels": True,
                "era": "modern",
            },
            {"list": "server", "name": "x", "kind": "capability_added", "breaksClients": False, "affectsModels": False},
        ],
    },
    "deprecation_warnings": [{"kind": "MCPDeprecationWarning", "message": "use path", "count": 3}],
}


def test_render_groups_everything_a_team_needs():
    text, blocks = render(REPORT)
    assert text.splitlines()[0] == "FAIL: library fails on mcp 2.4.0b1 (baseline 2.3.0)"
    body = "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")
    assert (
        "2026-07-28: 30 of 37 scenarios passed; 7 failed: 6 only as expected (6 known failures), "
        "1 with an unexpected failure (1 unexpected); 1 stale entry; not scored: 1 run, 1 failing"
    ) in body
    assert "`server-stateless:sep-2575-server-implements-discover`: discover missing" in body
    assert "`ping:ping` now passes" in body
    assert "2025-11-25: not judged: the conformance suite timed out after 600 s" in body
    assert "1 breaking, 1 affect models, 1 other" in body
    assert "_Breaks clients_\n• tools `find_book`: removed" in body
    assert "_Affects models_\n• tools `find`: description_changed at `description` (modern)" in body
    assert "MCPDeprecationWarning: use path (×3)" in body
    assert blocks[-1]["type"] == "context" and "1 min 23 s" in blocks[-1]["elements"][0]["text"]
    assert len(blocks) <= 50 and all(len(b.get("text", {}).get("text", "")) <= 3000 for b in blocks)
    json.dumps(blocks)


def test_the_conformance_line_adds_up_for_a_reader():
    """Issue 37: "11 scenarios passed, 26 failed; 30 expected failures, 0 unexpected" mixed scenarios and checks.
    Now every number of the line is in scenarios, and the known check failures are said to be checks."""
    expected = [f"s{i}:check-a" for i in range(26)] + [f"s{i}:check-b" for i in range(4)]  # 30 checks, 26 scenarios
    entry = {
        "requirements": "2026-07-28",
        "scenarios": 37,
        "passed": 11,
        "failed": 26,
        "expected_failures": expected,
        "unexpected_failures": [],
        "stale_entries": [],
    }
    line, regressions, stale = conformance_lines(entry)
    assert (
        line == "2026-07-28: 11 of 37 scenarios passed; the 26 that failed did so only as expected (30 known failures)"
    )
    assert regressions == [] and stale == []
    numbers = [int(n) for n in re.findall(r"\b\d+\b", line.removeprefix("2026-07-28"))]
    assert numbers[0] + numbers[2] == numbers[1], line  # passed + failed = scenarios

    everything = conformance_lines({**entry, "passed": 37, "failed": 0, "expected_failures": []})[0]
    assert everything == "2026-07-28: all 37 scenarios passed"
    mixed = conformance_lines(
        {**entry, "unexpected_failures": ["s0:check-c", "s0:check-d", "s30"], "stale_entries": ["s1:check-b", "x:y"]}
    )[0]
    assert mixed == (
        "2026-07-28: 11 of 37 scenarios passed; 26 failed: 24 only as expected (30 known failures), "
        "2 with an unexpected failure (3 unexpected); 2 stale entries"
    )


def test_render_of_a_failed_install_shows_the_evidence():
    report = {
        **REPORT,
        "conformance": [],
        "contract": None,
        "deprecation_warnings": [],
        "install": {"ok": False, "error": "uv pip install failed (exit code 1)", "evidence": "No solution found"},
    }
    text, blocks = render(report)
    assert "No solution found" in text
    assert any("```install: uv pip install failed" in b["text"]["text"] for b in blocks if b["type"] == "section")


def test_long_lists_are_clipped_for_slack():
    many = [f"scenario-{i}:check-{i}" for i in range(500)]
    report = {**REPORT, "conformance": [{**REPORT["conformance"][0], "unexpected_failures": many}]}
    _, blocks = render(report)
    assert all(len(b.get("text", {}).get("text", "")) <= 3000 for b in blocks)
    assert any("… and 490 more" in b["text"]["text"] for b in blocks if b["type"] == "section")


def test_result_notice_replies_in_the_beta_alert_thread(tmp_path: Path):
    loaded = write_config(tmp_path, [library_server()], tmp_path / "envs")
    notice = result_notice(loaded, REPORT)
    assert notice.key == "run:library:2.4.0b1:books"
    assert notice.thread_of == "release:python:2.4.0b1:books"
    assert notice.channel == "#books-mcp" and notice.team == "books"


def test_prune_runs_keeps_the_newest(tmp_path: Path):
    for stamp in ("20261101T000000Z-a", "20261102T000000Z-b", "20261103T000000Z-c"):
        (tmp_path / stamp).mkdir()
    removed = prune_runs(tmp_path, keep=2)
    assert [p.name for p in removed] == ["20261101T000000Z-a"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["20261102T000000Z-b", "20261103T000000Z-c"]


def check_args(config: Path, server: str, version: str, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config")
    commands.register(parser.add_subparsers())
    return parser.parse_args(["--config", str(config), "check", "--server", server, "--sdk-version", version, *extra])


def test_check_command_exit_codes_without_installs(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    write_config(tmp_path, [missing_project("a")], tmp_path / "envs")
    config = tmp_path / "watcher.yaml"
    args = check_args(config, "nope", "2.3.0")
    assert args.handler(args) == 2
    assert "no server named 'nope'" in capsys.readouterr().err
    args = check_args(config, "a", "2.3.0", "--json")
    assert args.handler(args) == 2, "a server path that is not there is a mistake, not the SDK failing"
    captured = capsys.readouterr()
    assert captured.out == "" and "its path /nonexistent/a is not a folder" in captured.err
