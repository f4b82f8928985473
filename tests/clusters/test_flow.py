"""The clusters through the suite worker, the outbox, the status pages and a multi-server backtest: recorded real
start-up failures of four servers under mcp 2.0.0a1 stand in for the runs (the slow e2e runs them for real)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.clusters.config import write_cluster_config
from tests.clusters.helpers import recorded, start_failure
from tests.fakes.registry_server import serve_registry
from watcher.clusters.backtest import cluster_backtests, render_clusters, signature_json
from watcher.core.store import Store
from watcher.ops.health import Readiness, build_app
from watcher.suites import worker
from watcher.suites.worker import process_queue, queue_for_release
from watcher.web.access import Access
from watcher.web.app import web_parts
from watcher.web.context import WebContext

RECORDING = {"notes-1x": "fastmcp_notes", "weather": "weather_tools", "todo": "todo_server", "ledger": "ledger_server"}


@pytest.fixture
def registry():
    with serve_registry() as fake:
        yield fake


def test_one_beta_four_servers_one_cluster_one_operator_notice_one_reply_per_team(
    tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch
):
    loaded = write_cluster_config(tmp_path, registry.base, public_url="https://watcher.example.org")
    store = Store(loaded.resolve(loaded.config.state))
    executed: list[str] = []

    def recorded_run(loaded_, store_, run, stop):  # the runs' real outputs, recorded (see fixtures/recorded)
        executed.append(run["server"])
        report = start_failure(run["server"], recorded(f"{RECORDING[run['server']]}-2.0.0a1"))
        return {**report, "run_id": str(run["id"])}  # a run id is a string, as the runner writes it

    monkeypatch.setattr(worker, "execute", recorded_run)
    assert sorted(queue_for_release(loaded, store, "python", "2.0.0a1", prerelease=True)) == sorted(RECORDING)
    outcomes = process_queue(loaded, store)
    assert sorted(executed) == sorted(RECORDING) and len(outcomes) == 4

    rows = store.outbox()
    results = [r for r in rows if r["kind"] == "suite_result"]
    replies = [r for r in rows if r["kind"] == "cluster"]
    [upstream] = [r for r in rows if r["kind"] == "cluster_upstream"]
    assert len(results) == 4  # every result posted at once, as ever
    assert sorted(r["team"] for r in replies) == ["books", "forecasts", "planning"]  # ledger's team: none
    assert all(r["thread_of"] == f"release:python:2.0.0a1:{r['team']}" for r in replies)
    assert "<https://watcher.example.org/clusters#" in replies[0]["blocks"][0]["text"]["text"]
    assert "announced in 2.0.0a1's notes, migrate" in upstream["text"] and upstream["channel"] == "#mcp-platform"
    assert "3 servers of 3 teams" in upstream["text"]
    # The result that crossed and any after it say so in their own notice; the ledger's never does.
    said = {r["team"]: "likely the SDK" in r["text"] for r in results}
    assert said["accounts"] is False and sum(said.values()) >= 1
    assert registry.stats.by_path["/github/repos/modelcontextprotocol/python-sdk/releases/tags/v2.0.0a1"] == 1

    _pages_show_it(loaded, store, outcomes)


def _pages_show_it(loaded, store: Store, outcomes: list[dict]) -> None:
    ctx = WebContext(loaded, store, now=lambda: datetime(2026, 12, 1, 12, tzinfo=UTC))
    client = TestClient(build_app(Readiness(store, 30, ctx.now(), lambda: True), *web_parts(ctx, Access(None, False))))
    status = client.get("/api/status").json()
    [shared] = [c for c in status["clusters"] if c["likely_sdk"]]
    assert shared["servers"] == ["notes-1x", "todo", "weather"] and shared["teams"] == [
        "books",
        "forecasts",
        "planning",
    ]
    assert shared["quotes"][0]["text"] == "FastMCP is renamed to MCPServer."
    assert [c["servers"] for c in status["clusters"] if not c["likely_sdk"]] == [["ledger"]]
    page = client.get("/clusters").text
    assert f'id="{shared["signature"]}"' in page and "Likely the SDK: python 2.0.0a1" in page
    assert "No module named &#39;mcp.server.fastmcp&#39;" in page  # escaped by the page's templates
    assert "https://github.com/modelcontextprotocol/python-sdk/releases/tag/v2.0.0a1" in page
    assert f'href="/clusters#{shared["signature"]}"' in client.get("/").text
    todo = next(o for o in outcomes if o["server"] == "todo")
    run_page = client.get(f"/runs/{todo['run_id']}").text
    assert "Failure cluster" in run_page and shared["signature"] in run_page


def test_a_backtest_of_several_servers_lists_one_cluster_per_version_with_the_lead_time(tmp_path: Path, registry):
    loaded = write_cluster_config(tmp_path, registry.base)
    store = Store(loaded.resolve(loaded.config.state))
    answers = []
    for name, recording in RECORDING.items():
        team = loaded.config.server(name).team
        versions = [
            {
                "version": "1.27.2",
                "published": "2026-05-20T00:00:00Z",
                "line": "1.x",
                "prerelease": False,
                "signature": None,
            },
        ]
        for version, published, pre in (
            ("2.0.0a1", "2026-06-11T15:00:00Z", True),
            ("2.0.0", "2026-07-28T09:00:00Z", False),
        ):
            report = start_failure(name, recorded(f"{recording}-2.0.0a1").replace("2.0.0a1", version), version)
            versions.append(
                {
                    "version": version,
                    "published": published,
                    "line": "2.x",
                    "prerelease": pre,
                    "signature": signature_json(report, "mcp"),
                }
            )
        answers.append({"server": name, "team": team, "sdk": "python", "versions": versions})
    json.dumps(answers)  # what a backtest keeps is plain data
    clusters, figures = cluster_backtests(loaded, store, answers)
    assert [(c.version, len(c.servers)) for c in clusters] == [
        ("2.0.0a1", 3),
        ("2.0.0a1", 1),
        ("2.0.0", 3),
        ("2.0.0", 1),
    ]
    first = clusters[0]
    assert first.servers == ["notes-1x", "todo", "weather"] and first.lead_days == 47 and first.final_version == "2.0.0"
    assert first.notes.startswith("Announced in 2.0.0a1's notes")
    assert clusters[1].servers == ["ledger"] and clusters[1].notes == ""
    assert figures.as_dict() == {"failing_results": 8, "clusters": 4, "signatures": 2, "shared": 2, "explained": 2}
    final = clusters[2]
    assert (final.version, final.first_version, final.lead_days) == ("2.0.0", "2.0.0a1", 47)  # its first warning
    text = render_clusters(clusters, figures)
    assert (
        "2.0.0a1 (2026-06-11): 3 servers of 3 teams: ModuleNotFoundError: No module named 'mcp.server.fastmcp'" in text
    )
    assert "first warning at 2.0.0a1, 47 days before 2.0.0" in text
    assert "8 failing results in 4 clusters (2 shared by several servers): 4 investigations folded, 2 distinct" in text
