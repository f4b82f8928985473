"""The github-actions executor against the loopback GitHub (REST shapes recorded in tests/fixtures/github_actions),
through the real HTTP client: dispatch → run found by its key → followed → artifact report → one threaded reply."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.github_actions import RunPlan, zip_of
from tests.fakes.github_server import FakeGitHub
from tests.slackapp.helpers import pinned_clock
from tests.suites.helpers import LIBRARY, write_config
from watcher.config import LoadedConfig
from watcher.contract.accept import parse_accept_file
from watcher.core.store import Store
from watcher.decisions import records
from watcher.suites.executors.github_actions import run_key, run_on_actions
from watcher.suites.judge.contract import accept_changes, contract_reason
from watcher.suites.settings import GitHubActionsExecutor
from watcher.suites.worker import process_queue, queue_for_release

REPO, WORKFLOW = "acme/books-mcp", "mcp-watcher.yml"
TOKEN = "ghp_" + "a" * 36
VERSION = "2.4.0b1"


def ci_report(verdict: str = "fail", **overrides: Any) -> dict[str, Any]:
    """What `mcp-watcher check --json` writes in the team's CI (the fields the reply uses)."""
    report = {
        "server": "books-ci",
        "team": "books",
        "sdk": "python",
        "sdk_package": "mcp",
        "sdk_version": VERSION,
        "baseline_sdk_version": "2.3.0",
        "language": "python",
        "run_id": "20261130T091500Z-2.4.0b1-ab12",
        "run_dir": "/home/runner/work/books-mcp/state/runs/books-ci/20261130T091500Z-2.4.0b1-ab12",
        "verdict": verdict,
        "reasons": [{"verdict": "fail", "reason": "contract: 1 change(s) that break clients"}]
        if verdict == "fail"
        else [],
        "install": {"ok": True},
        "start": {"ok": True},
        "conformance": [],
        "contract": {
            "baseline": "2.3.0",
            "changes": [{"list": "tools", "name": "find_book", "kind": "tool-removed", "breaksClients": True}],
        },
        "deprecation_warnings": [],
        "source": None,
        "seconds": 312.4,
    }
    return {**report, **overrides}


def config(tmp_path: Path, gh: FakeGitHub, **executor: Any) -> LoadedConfig:
    settings = {
        "kind": "github-actions",
        "repo": REPO,
        "workflow": WORKFLOW,
        "ref": "main",
        "token_env": "BOOKS_GH_TOKEN",
        "api_url": gh.api_url,
        "poll_seconds": 0.01,
        "find_seconds": 5,
        "timeout_minutes": 1,
        **executor,
    }
    server = {
        "name": "books-ci",
        "team": "books",
        "sdk": "python",
        "language": "python",
        "path": str(LIBRARY),
        "start": ["python", "-m", "library_server", "--port", "{port}"],
        "baseline_sdk_version": "2.3.0",
        "executor": settings,
    }
    return write_config(tmp_path, [server], tmp_path / "envs", keep_runs=5)


@pytest.fixture
def gh(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("BOOKS_GH_TOKEN", TOKEN)
    with FakeGitHub() as fake:
        fake.actions.token = TOKEN
        yield fake


def test_dispatch_find_by_key_follow_and_reply_once_in_the_beta_thread(tmp_path: Path, gh: FakeGitHub):
    gh.actions.add_workflow(REPO, WORKFLOW, RunPlan(report=ci_report(), appear_after=2))
    # Another run of the same workflow, started at the same moment: the newest by time, not ours.
    gh.actions.add_decoy_run(REPO, WORKFLOW, "mcp-watcher other-server mcp 2.4.0b1 [other-key]")
    loaded = config(tmp_path, gh)
    store = Store(tmp_path / "state.db")
    assert queue_for_release(loaded, store, "python", VERSION, prerelease=True) == ["books-ci"]
    [outcome] = process_queue(loaded, store)
    report = outcome["report"]
    [dispatch] = gh.actions.dispatches
    [queued] = store.runs()
    key = run_key(queued)
    assert dispatch == {"server": "books-ci", "sdk_package": "mcp", "sdk_version": VERSION, "run_key": key}
    ours = next(r for r in gh.actions.runs.values() if f"[{key}]" in r.title)
    assert report["verdict"] == "fail" and report["executor"] == "github-actions"
    assert report["actions"]["run_id"] == ours.id and report["actions"]["conclusion"] == "success"
    assert report["actions"]["html_url"] == f"https://github.com/{REPO}/actions/runs/{ours.id}"
    assert report["contract"]["changes"][0]["name"] == "find_book"
    assert (Path(report["run_dir"]) / "report.json").exists() and (Path(report["run_dir"]) / "artifact.zip").exists()
    assert store.dispatched(key)["state"] == "completed"
    # Bearer token on the API; the signed download address gets no token.
    api_calls = [r for r in gh.requests if r.path.startswith("/repos/")]
    assert api_calls and all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in api_calls)
    [blob] = [r for r in gh.requests if r.path.startswith("/blob/")]
    assert "authorization" not in blob.headers
    [row] = store.outbox()
    assert row["key"] == f"run:books-ci:{VERSION}:books"
    assert row["thread_of"] == f"release:python:{VERSION}:books"
    assert row["text"].startswith(f"FAIL: books-ci fails on mcp {VERSION}")
    assert f"https://github.com/{REPO}/actions/runs/{ours.id}" in row["text"]
    assert TOKEN not in row["text"] and TOKEN not in str(store.runs())


def test_a_restart_while_the_run_is_in_progress_follows_it_without_dispatching_again(tmp_path: Path, gh: FakeGitHub):
    gh.actions.add_workflow(
        REPO, WORKFLOW, RunPlan(statuses=["queued", *["in_progress"] * 100000], report=ci_report("pass"))
    )
    loaded = config(tmp_path, gh)
    store = Store(tmp_path / "state.db")
    queue_for_release(loaded, store, "python", VERSION, prerelease=True)
    stop = threading.Event()
    first = threading.Thread(target=process_queue, args=(loaded, store, stop))
    first.start()
    deadline = time.monotonic() + 20
    while not any(r.step >= 2 for r in gh.actions.runs.values()) and time.monotonic() < deadline:
        time.sleep(0.02)
    stop.set()  # the service stops while the run is in progress on GitHub
    first.join(timeout=20)
    [run] = store.runs()
    assert run["status"] == "queued" and run["verdict"] == "interrupted"
    assert store.dispatched(run_key(run))["state"] == "found"
    [remote] = gh.actions.runs.values()
    remote.plan.statuses, remote.step = ["in_progress", "completed"], 0

    store = Store(tmp_path / "state.db")  # a new process: same state file
    [outcome] = process_queue(loaded, store)
    assert len(gh.actions.dispatches) == 1
    assert gh.count(f"/repos/{REPO}/actions/workflows/") == 1
    assert outcome["report"]["verdict"] == "pass" and outcome["report"]["actions"]["resumed"] is True
    assert outcome["report"]["actions"]["run_id"] == remote.id
    assert len(store.outbox()) == 1


def _failing_run(tmp_path: Path, gh: FakeGitHub, **executor: Any) -> dict[str, Any]:
    loaded = config(tmp_path, gh, **executor)
    store = Store(tmp_path / "state.db")
    queue_for_release(loaded, store, "python", VERSION, prerelease=True)
    [outcome] = process_queue(loaded, store)
    [row] = store.outbox()
    assert row["text"].startswith("ERROR: books-ci could not be checked")
    return outcome["report"]


WORKFLOW_PAGE = f"https://github.com/{REPO}/actions/workflows/{WORKFLOW}"


@pytest.mark.parametrize(
    ("plan", "executor", "reason"),
    [
        (None, {}, f"workflow {WORKFLOW} not found in {REPO}"),
        (RunPlan(visible=False, report=ci_report()), {"find_seconds": 0.3}, "the dispatched run never appeared"),
        (RunPlan(conclusion="cancelled", report=ci_report()), {}, "ended as cancelled"),
        (RunPlan(statuses=["in_progress"], report=ci_report()), {"timeout_minutes": 0.005}, "did not complete within"),
        (RunPlan(conclusion="failure"), {}, "without the 'mcp-watcher-report' artifact"),
        (RunPlan(artifact_bytes=zip_of({"notes.txt": b"hello"})), {}, "not a check report: no report.json"),
        (RunPlan(artifact_bytes=b"<html>not a zip</html>"), {}, "not a check report"),
        (RunPlan(report={"server": "books-ci", "sdk_version": VERSION}), {}, "report.json has no verdict"),
        (RunPlan(report=ci_report(sdk_version="2.3.0")), {}, "not of books-ci on 2.4.0b1"),
        (RunPlan(conclusion="failure", report=ci_report("pass")), {}, "not taken as a pass"),
    ],
)
def test_every_failure_is_an_error_result_with_the_reason_and_a_link(
    tmp_path: Path, gh: FakeGitHub, plan: RunPlan | None, executor: dict[str, Any], reason: str
):
    if plan is not None:
        gh.actions.add_workflow(REPO, WORKFLOW, plan)
    report = _failing_run(tmp_path, gh, **executor)
    assert report["verdict"] == "error"
    [entry] = report["reasons"]
    assert reason in entry["reason"]
    run_ids = list(gh.actions.runs)
    link = f"https://github.com/{REPO}/actions/runs/{run_ids[0]}" if plan and plan.visible else WORKFLOW_PAGE
    assert entry["reason"].endswith(f"({link})")


def test_a_token_without_permission_is_an_error_result(tmp_path: Path, gh: FakeGitHub):
    gh.actions.add_workflow(REPO, WORKFLOW, RunPlan(report=ci_report()))
    gh.actions.token = "ghp_" + "b" * 36  # GitHub knows another token; ours is refused
    report = _failing_run(tmp_path, gh)
    assert "may not dispatch workflows" in report["reasons"][0]["reason"]
    assert "HTTP 403" in report["reasons"][0]["reason"]
    assert gh.actions.dispatches == []


def test_rate_limits_are_waited_out(tmp_path: Path, gh: FakeGitHub):
    gh.actions.add_workflow(REPO, WORKFLOW, RunPlan(report=ci_report()))
    limited = {"x-ratelimit-remaining": "0", "retry-after": "7"}
    gh.fail_next(f"/repos/{REPO}/actions/workflows/", status=403, headers=limited)
    gh.fail_next(
        f"/repos/{REPO}/actions/runs", status=429, body='{"message": "You have exceeded a secondary rate limit"}'
    )
    loaded = config(tmp_path, gh, timeout_minutes=5)  # a budget longer than the waits asked for
    store = Store(tmp_path / "state.db")
    store.queue_run("books-ci", "python", VERSION, "test")
    run = store.claim_run()
    waits: list[float] = []
    server = loaded.config.server("books-ci")
    assert isinstance(server.executor, GitHubActionsExecutor)
    report = run_on_actions(loaded, store, run, server, server.executor, None, wait=waits.append)
    assert report["verdict"] == "fail", report["reasons"]
    assert 7.0 in waits and 60.0 in waits
    assert len(gh.actions.dispatches) == 1


def _claimed(tmp_path: Path, gh: FakeGitHub, **executor: Any):
    loaded = config(tmp_path, gh, **executor)
    store = Store(tmp_path / "state.db")
    store.queue_run("books-ci", "python", VERSION, "test")
    run = store.claim_run()
    server = loaded.config.server("books-ci")
    assert isinstance(server.executor, GitHubActionsExecutor)
    return loaded, store, run, server


def test_a_retry_after_of_an_hour_ends_at_once_when_it_would_pass_the_run_deadline(tmp_path: Path, gh: FakeGitHub):
    gh.actions.add_workflow(REPO, WORKFLOW, RunPlan(report=ci_report()))
    gh.fail_next(f"/repos/{REPO}/actions/workflows/", status=429, headers={"retry-after": "3600"})
    loaded, store, run, server = _claimed(tmp_path, gh, timeout_minutes=2)
    slept: list[float] = []
    began = time.monotonic()
    report = run_on_actions(loaded, store, run, server, server.executor, threading.Event(), wait=slept.append)
    assert time.monotonic() - began < 20
    assert report["verdict"] == "error" and slept == []
    assert "past the run's deadline" in report["reasons"][0]["reason"]
    assert gh.actions.dispatches == []


def test_a_long_rate_limit_wait_ends_on_stop(tmp_path: Path, gh: FakeGitHub):
    gh.actions.add_workflow(REPO, WORKFLOW, RunPlan(report=ci_report()))
    gh.fail_next(f"/repos/{REPO}/actions/workflows/", status=429, headers={"retry-after": "3600"})
    loaded, store, run, server = _claimed(tmp_path, gh, timeout_minutes=120)  # the wait fits the deadline
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()  # SIGTERM's handler sets the service's stop event
    began = time.monotonic()
    report = run_on_actions(loaded, store, run, server, server.executor, stop)
    assert time.monotonic() - began < 20
    assert report["verdict"] == "error"
    assert "interrupted" in report["reasons"][0]["reason"]


def test_a_dispatch_accepted_but_answered_502_is_looked_up_not_sent_again(tmp_path: Path, gh: FakeGitHub):
    gh.actions.add_workflow(REPO, WORKFLOW, RunPlan(report=ci_report(), appear_after=1))
    gh.actions.accept_then_fail = [502]
    loaded, store, run, server = _claimed(tmp_path, gh)
    report = run_on_actions(loaded, store, run, server, server.executor, None)
    assert len(gh.actions.dispatches) == 1 and len(gh.actions.runs) == 1  # exactly one run for the key
    assert gh.count(f"/repos/{REPO}/actions/workflows/") == 1
    assert report["verdict"] == "fail", report["reasons"]
    [remote] = gh.actions.runs.values()
    assert report["actions"]["run_id"] == remote.id


def test_a_dispatch_lost_before_github_took_it_is_sent_again_after_the_look_up(tmp_path: Path, gh: FakeGitHub):
    gh.actions.add_workflow(REPO, WORKFLOW, RunPlan(report=ci_report()))
    gh.fail_next(f"/repos/{REPO}/actions/workflows/", status=502)  # refused before any run started
    loaded, store, run, server = _claimed(tmp_path, gh, lookup_seconds=0.2)
    report = run_on_actions(loaded, store, run, server, server.executor, None)
    assert gh.count(f"/repos/{REPO}/actions/workflows/") == 2
    assert len(gh.actions.runs) == 1
    assert report["verdict"] == "fail", report["reasons"]


# --- accepts made in Slack: the CI steered with its accept file only; the watcher adds Slack's -----------------

REMOVED = {"rule": "tool_removed", "list": "tools", "name": "find_book"}
RENAMED = {"rule": "tool_removed", "list": "tools", "name": "list_books"}
ALICE = records.Actor("U0ALICE", "alice")
SLACK_BY = "alice (U0ALICE) in Slack, 2026-12-03T12:00:00+00:00"


def _change(name: str) -> dict[str, Any]:
    return {"rule": "tool_removed", "list": "tools", "name": name, "breaksClients": True, "grade": "breaking"}


def _ci_contract(tmp_path: Path, gh: FakeGitHub, changes: list[str], file: list[dict[str, Any]] | None) -> dict:
    """The contract part as `mcp-watcher check` steers it in the team's CI: the same steering function, on a
    runner with its accept file and no state database (so no Slack entries)."""
    runner = config(tmp_path / "runner", gh)
    accept = parse_accept_file(yaml.safe_dump(file), "/home/runner/work/books-mcp/accept.yaml") if file else None
    diff = {"baseline": "2.3.0", "changes": [_change(n) for n in changes], "accepted": [], "summary": {}}
    return accept_changes(runner, "books-ci", diff, accept)


def _ci_run_with_slack(
    tmp_path: Path,
    gh: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    contract: dict,
    slack: list[dict[str, Any]],
    reason: str | None = "",
) -> tuple[dict[str, Any], Store]:
    reason = contract_reason(contract) if reason == "" else reason  # "": the reason the CI would have given
    reasons = [{"verdict": "fail", "reason": reason}] if reason else []
    report = ci_report("fail" if reason else "pass", contract=contract, reasons=reasons)
    gh.actions.add_workflow(REPO, WORKFLOW, RunPlan(report=report, conclusion="failure" if reason else "success"))
    with pinned_clock(monkeypatch):
        loaded = config(tmp_path, gh)
        store = Store(loaded.resolve(loaded.config.state))  # the watcher's state, where Slack's accepts live
        for entry in slack:
            assert records.add_accepts(store, "books-ci", "books", [{**entry, "by": SLACK_BY}], ALICE, 1)
        queue_for_release(loaded, store, "python", VERSION, prerelease=True)
        [outcome] = process_queue(loaded, store)
    return outcome["report"], store


def test_a_slack_accept_passes_a_ci_run_whose_only_failure_it_covers(
    tmp_path: Path, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch
):
    contract = _ci_contract(tmp_path, gh, ["find_book"], None)
    slack = [{**REMOVED, "reason": "find_book moved to search", "expires": "2027-01-15"}]
    report, store = _ci_run_with_slack(tmp_path, gh, monkeypatch, contract, slack)
    assert report["executor"] == "github-actions" and report["actions"]["conclusion"] == "failure"
    assert report["verdict"] == "pass" and report["reasons"] == []
    steered = report["contract"]
    assert steered["changes"] == [] and steered["summary"]["accepted"] == 1
    [accepted] = steered["accepted"]
    assert accepted["name"] == "find_book"
    assert accepted["accepted"] == {"reason": "find_book moved to search", "expires": "2027-01-15", "by": SLACK_BY}
    assert steered["acceptance"]["file"] == "Slack" and steered["acceptance"]["stale"] == []
    assert steered["acceptance"]["slack"]["applied_by"] == "watcher"
    assert steered["acceptance"]["slack"]["from_slack"] == [
        {"label": "tool_removed tools/find_book", "by": SLACK_BY, "expires": "2027-01-15"}
    ]
    assert (
        f"accept entries from Slack, applied by the watcher: tool_removed tools/find_book (by {SLACK_BY})"
        in (steered["notes"])
    )
    stored = json.loads((Path(report["run_dir"]) / "report.json").read_text())
    assert stored["verdict"] == "pass" and stored["contract"]["accepted"][0]["name"] == "find_book"
    [run] = store.runs()
    assert run["verdict"] == "pass"
    [row] = store.outbox()
    assert row["text"].startswith("PASS: books-ci passes") and "accepted tools `find_book`" in row["text"]


def test_an_expired_slack_accept_fails_a_ci_run_as_an_expired_file_entry_would(
    tmp_path: Path, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch
):
    entry = {**REMOVED, "reason": "until the client release", "expires": "2026-12-01"}  # before the pinned today
    report, _ = _ci_run_with_slack(tmp_path, gh, monkeypatch, _ci_contract(tmp_path, gh, ["find_book"], None), [entry])
    with pinned_clock(monkeypatch):  # the same run judged with the entry in the team's accept file instead
        by_file = _ci_contract(tmp_path / "file", gh, ["find_book"], [{**entry, "by": SLACK_BY}])
    steered = report["contract"]
    assert report["verdict"] == "fail"
    assert report["reasons"] == [{"verdict": "fail", "reason": "contract: 1 change(s) that break clients"}]
    assert [c["name"] for c in steered["changes"]] == ["find_book"] and steered["accepted"] == []
    expired = [n for n in steered["notes"] if n.startswith("acceptance expired")]
    assert expired == [n for n in by_file["notes"] if n.startswith("acceptance expired")]
    assert expired == [
        "acceptance expired on 2026-12-01: tool_removed tools/find_book (until the client release); "
        "reported again: tools/find_book"
    ]
    assert steered["acceptance"]["expired"] == by_file["acceptance"]["expired"]


def test_on_a_ci_run_the_file_wins_where_both_name_a_change_and_slack_covers_the_rest(
    tmp_path: Path, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch
):
    with pinned_clock(monkeypatch):
        file = [{**REMOVED, "reason": "search replaces it", "expires": "2027-02-01"}]
        contract = _ci_contract(tmp_path, gh, ["find_book", "list_books"], file)
    # The CI's own verdict: the file accepts find_book; list_books still fails it.
    assert [c["name"] for c in contract["accepted"]] == ["find_book"] and contract_reason(contract)
    slack = [
        {**REMOVED, "reason": "accepted in a hurry", "expires": "2027-03-01"},
        {**RENAMED, "reason": "list moved to search", "expires": "2027-03-01"},
    ]
    report, _ = _ci_run_with_slack(tmp_path, gh, monkeypatch, contract, slack)
    steered = report["contract"]
    assert report["verdict"] == "pass" and report["reasons"] == []
    assert {c["name"]: c["accepted"]["reason"] for c in steered["accepted"]} == {
        "find_book": "search replaces it",  # the file's entry, not Slack's
        "list_books": "list moved to search",
    }
    [shadowed] = steered["acceptance"]["slack"]["shadowed"]
    assert shadowed["label"] == "tool_removed tools/find_book" and shadowed["by"] == SLACK_BY
    assert any("the accept file names the same change (the file wins)" in n for n in steered["notes"])
    assert steered["acceptance"]["file"] == "/home/runner/work/books-mcp/accept.yaml + Slack"
    assert steered["acceptance"]["stale"] == []
    assert [s["label"] for s in steered["acceptance"]["slack"]["from_slack"]] == ["tool_removed tools/list_books"]


def test_a_ci_run_without_slack_accepts_is_left_as_the_ci_judged_it(
    tmp_path: Path, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch
):
    contract = _ci_contract(tmp_path, gh, ["find_book"], None)
    report, _ = _ci_run_with_slack(tmp_path, gh, monkeypatch, contract, [])
    assert report["verdict"] == "fail" and report["contract"] == contract


def test_a_ci_contract_the_watcher_cannot_steer_is_an_error_result(
    tmp_path: Path, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch
):
    slack = [{**REMOVED, "reason": "find_book moved to search", "expires": "2027-01-15"}]
    reason = "contract: 1 change(s) that break clients"
    report, store = _ci_run_with_slack(tmp_path, gh, monkeypatch, {"changes": ["not a change"]}, slack, reason)
    assert report["verdict"] == "error"
    [entry] = report["reasons"]
    # The typed reader refuses the artifact at the door, naming the part that is no contract change.
    assert "the artifact is not a check report: report.json: contract.changes.0: " in entry["reason"]
    [row] = store.outbox()
    assert row["text"].startswith("ERROR: books-ci could not be checked")
