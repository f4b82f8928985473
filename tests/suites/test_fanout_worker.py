"""The worker's fan-out against the loopback GitHub: one beta, several servers in several repositories on
GitHub Actions — paced dispatches, each repository followed by one conditional listing, every result in,
and a restart in the middle of the batch dispatching nothing twice."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes.github_actions import RunPlan
from tests.fakes.github_server import FakeGitHub
from tests.suites.helpers import LIBRARY, write_config
from tests.suites.test_github_actions import TOKEN, VERSION, ci_report
from watcher.config import LoadedConfig
from watcher.core.store import Store
from watcher.sources.settings import HttpSettings
from watcher.suites.executors.fanout import Limits, Pacer, _completed_runs, _Repo
from watcher.suites.executors.github_api import GitHubApi
from watcher.suites.worker import process_queue, queue_for_release

REPOS = ("acme/books-mcp", "acme/films-mcp", "acme/games-mcp")
SERVERS = [(f"{repo.split('/')[1].removesuffix('-mcp')}-{n}", repo) for repo in REPOS for n in (1, 2)]
PACE = Limits(creates_per_minute=2, points_per_minute=10_000, minute_seconds=0.4)
"""Two dispatches per 0.4 s "minute": six dispatches take at least two windows."""


@pytest.fixture
def gh(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("BOOKS_GH_TOKEN", TOKEN)
    with FakeGitHub() as fake:
        fake.actions.token = TOKEN
        fake.actions.advance_on_list = True  # runs progress while the fan-out lists them
        yield fake


def setup(tmp_path: Path, gh: FakeGitHub, statuses: list[str]) -> LoadedConfig:
    servers: list[dict[str, Any]] = []
    for name, repo in SERVERS:
        # One workflow file per server, so each run's artifact holds that server's report.
        report = ci_report("pass" if name.endswith("1") else "fail", server=name)
        gh.actions.add_workflow(repo, f"{name}.yml", RunPlan(statuses=list(statuses), report=report))
        executor = {
            "kind": "github-actions",
            "repo": repo,
            "workflow": f"{name}.yml",
            "ref": "main",
            "token_env": "BOOKS_GH_TOKEN",
            "api_url": gh.api_url,
            "poll_seconds": 0.01,
            "timeout_minutes": 1,
        }
        servers.append(
            {
                "name": name,
                "team": "books",
                "sdk": "python",
                "language": "python",
                "path": str(LIBRARY),
                "start": ["python", "-m", "library_server", "--port", "{port}"],
                "baseline_sdk_version": "2.3.0",
                "executor": executor,
            }
        )
    return write_config(tmp_path, servers, tmp_path / "envs", keep_runs=5)


def listings(gh: FakeGitHub, repo: str) -> list[Any]:
    return [r for r in gh.requests if r.method == "GET" and r.path == f"/repos/{repo}/actions/runs"]


def test_one_beta_fans_out_paced_and_followed_by_one_listing_per_repository(tmp_path: Path, gh: FakeGitHub):
    loaded = setup(tmp_path, gh, ["queued", "in_progress", "in_progress", "in_progress", "completed"])
    store = Store(tmp_path / "state.db")
    assert len(queue_for_release(loaded, store, "python", VERSION, prerelease=True)) == len(SERVERS)

    outcomes = process_queue(loaded, store, fanout_limits=PACE)

    # Every result in, each as a lone run delivers it: its verdict, its run row, its threaded reply.
    assert {o["server"]: o["verdict"] for o in outcomes} == {
        name: "pass" if name.endswith("1") else "fail" for name, _ in SERVERS
    }
    assert all(r["status"] == "done" for r in store.runs())
    assert {row["key"] for row in store.outbox()} == {f"run:{name}:{VERSION}:books" for name, _ in SERVERS}
    assert all(o["report"]["executor"] == "github-actions" and o["report"]["actions"]["run_id"] for o in outcomes)
    # Paced: never more than two dispatches in one 0.4 s window (the fake's arrival times; 0.1 s for jitter).
    posts = [r.at for r in gh.requests if r.method == "POST"]
    assert len(posts) == len(gh.actions.dispatches) == len(SERVERS)
    assert all(later - earlier >= 0.3 for earlier, later in zip(posts, posts[2:], strict=False))
    # Followed by listing: no per-run GET, each repository's completed runs listed conditionally.
    assert not [r for r in gh.requests if re.fullmatch(r"/repos/.+/actions/runs/\d+", r.path)]
    for repo in REPOS:
        mine = listings(gh, repo)
        assert mine and all(r.query.get("status") == "completed" for r in mine)
        assert any("if-none-match" in r.headers for r in mine) and any(r.status == 304 for r in mine)
    # The artifacts through the executor's bounded path: each run's artifact list, then its zip.
    assert sum(1 for r in gh.requests if r.path.endswith("/artifacts")) == len(SERVERS)
    assert sum(1 for r in gh.requests if r.path.startswith("/blob/artifacts/")) == len(SERVERS)


def test_a_restart_in_the_middle_of_the_batch_dispatches_nothing_twice(tmp_path: Path, gh: FakeGitHub):
    loaded = setup(tmp_path, gh, ["queued", *["in_progress"] * 100000])
    store = Store(tmp_path / "state.db")
    queue_for_release(loaded, store, "python", VERSION, prerelease=True)
    stop = threading.Event()
    first = threading.Thread(target=process_queue, args=(loaded, store, stop), kwargs={"fanout_limits": PACE})
    first.start()
    deadline = time.monotonic() + 20
    while len(gh.actions.dispatches) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()  # the service stops while the pacer holds the rest of the batch back
    first.join(timeout=20)
    assert not first.is_alive()
    sent = len(gh.actions.dispatches)
    assert 3 <= sent < len(SERVERS)
    assert all(r["status"] == "queued" and r["verdict"] == "interrupted" for r in store.runs())
    # From now on every run completes: those already on GitHub, and those still to dispatch.
    for remote in gh.actions.runs.values():
        remote.plan.statuses, remote.step = ["in_progress", "completed"], 0
    for plan in gh.actions.workflows.values():
        plan.statuses = ["in_progress", "completed"]

    store = Store(tmp_path / "state.db")  # a new process: same state file
    outcomes = process_queue(loaded, store, fanout_limits=PACE)
    keys = [d["run_key"] for d in gh.actions.dispatches]
    assert len(keys) == len(set(keys)) == len(SERVERS)
    assert sorted(o["server"] for o in outcomes) == sorted(name for name, _ in SERVERS)
    assert sum(1 for o in outcomes if o["report"]["actions"]["resumed"]) == sent
    assert {row["key"] for row in store.outbox()} == {f"run:{name}:{VERSION}:books" for name, _ in SERVERS}


def test_a_repository_with_more_completed_runs_than_a_page_is_listed_page_by_page(gh: FakeGitHub):
    repo = REPOS[0]
    for n in range(150):
        run_id = gh.actions.add_decoy_run(repo, "other.yml", f"someone else's run {n}")
        gh.actions.runs[run_id].plan.statuses = ["completed"]
    with httpx.Client() as client:
        api = GitHubApi(gh.api_url, TOKEN, client, HttpSettings(), time.sleep)
        listing = _Repo(api, repo, "2026-12-01T00:00:00Z")
        pacer = Pacer(Limits())
        first = _completed_runs(listing, pacer)
        again = _completed_runs(listing, pacer)
    assert len(first) == len(again) == 150 and {r["id"] for r in first} == set(gh.actions.runs)
    pages = listings(gh, repo)
    assert [r.query["page"] for r in pages] == ["1", "2", "1", "2"]
    assert [r.status for r in pages] == [200, 200, 304, 304]


def test_a_refused_dispatch_or_a_bad_artifact_in_a_batch_is_that_run_s_error_result(tmp_path: Path, gh: FakeGitHub):
    loaded = setup(tmp_path, gh, ["queued", "completed"])
    gh.actions.workflows.pop((REPOS[1], "films-1.yml"))  # the workflow is gone: the dispatch answers 404
    gh.actions.workflows[(REPOS[2], "games-2.yml")].report = ci_report("pass", server="books-1")  # another's report
    store = Store(tmp_path / "state.db")
    queue_for_release(loaded, store, "python", VERSION, prerelease=True)

    outcomes = {o["server"]: o for o in process_queue(loaded, store, fanout_limits=PACE)}

    assert outcomes["films-1"]["verdict"] == "error"
    assert "workflow films-1.yml not found in acme/films-mcp" in outcomes["films-1"]["report"]["reasons"][-1]["reason"]
    assert outcomes["games-2"]["verdict"] == "error"
    assert "not of games-2 on 2.4.0b1" in outcomes["games-2"]["report"]["reasons"][-1]["reason"]
    assert {n: o["verdict"] for n, o in outcomes.items() if n not in ("films-1", "games-2")} == {
        "books-1": "pass",
        "books-2": "fail",
        "films-2": "fail",
        "games-1": "pass",
    }
    assert len(store.outbox()) == len(SERVERS)
