"""End to end, on real `mcp` versions: four servers of four teams (three written against mcp 1.x in different
layouts, one broken for its own reason) run against 2.0.0a1 and replayed through the 2.0 pre-releases on the
loopback registry (the recorded PyPI history; the SDK installed from the machine's package index; the release
notes from the recorded GitHub release). One cluster at 2.0.0a1, its release-note entry quoted, one operator
notice with a draft upstream report, one reply per team; the broken server stays out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.backtest.helpers import SINCE, UNTIL, write_history
from tests.clusters.config import SERVERS, write_cluster_config
from tests.fakes.registry_server import FIXTURES as REGISTRY_FIXTURES
from tests.fakes.registry_server import serve_registry
from watcher.cli import main
from watcher.core.store import Store
from watcher.suites.worker import process_queue, queue_for_release

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

RELEASE_PAGE = "https://github.com/modelcontextprotocol/python-sdk/releases/tag/v2.0.0a1"
REMOVED = "ModuleNotFoundError: No module named 'mcp.server.fastmcp'"


def test_a_beta_that_breaks_three_servers_the_same_way_is_one_cluster_with_its_release_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    root = tmp_path / "registry"
    write_history(root, ["2.0.0a1", "2.0.0b1"])
    shutil.copytree(REGISTRY_FIXTURES / "github", root / "github")
    with serve_registry(root) as registry:
        loaded = write_cluster_config(tmp_path, registry.base, envs_dir=tmp_path / "envs")
        store = Store(loaded.resolve(loaded.config.state))
        # 1. The beta as the service meets it: a run per server, each result posted at once.
        assert len(queue_for_release(loaded, store, "python", "2.0.0a1", prerelease=True)) == len(SERVERS)
        outcomes = {o["server"]: o for o in process_queue(loaded, store)}
        assert {name: o["verdict"] for name, o in outcomes.items()} == dict.fromkeys(SERVERS, "fail")
        clusters = {name: o["report"]["cluster"] for name, o in outcomes.items()}
        assert clusters["notes-1x"]["signature"] == clusters["weather"]["signature"] == clusters["todo"]["signature"]
        assert clusters["ledger"]["signature"] != clusters["todo"]["signature"]
        assert clusters["todo"]["summary"] == REMOVED and clusters["todo"]["likely_sdk"] is True
        rows = store.outbox()
        replies = [r for r in rows if r["kind"] == "cluster"]
        [upstream] = [r for r in rows if r["kind"] == "cluster_upstream"]
        assert sorted(r["team"] for r in replies) == ["books", "forecasts", "planning"]
        assert all("FastMCP is renamed to MCPServer." in r["text"] for r in replies)
        assert all(RELEASE_PAGE in json.dumps(r["blocks"]) for r in replies)
        assert "announced in 2.0.0a1's notes, migrate" in upstream["text"]
        assert "3 servers of 3 teams" in upstream["text"]
        assert "No module named" in upstream["text"] and "pip install" in upstream["text"]
        [ledger_result] = [r for r in rows if r["kind"] == "suite_result" and r["team"] == "accounts"]
        assert "likely the SDK" not in ledger_result["text"]

        # 2. The same servers replayed through the 2.0 pre-releases: one cluster per version.
        argv = ["--config", str(loaded.path), "backtest", "--since", SINCE, "--until", UNTIL, "--json"]
        for name in SERVERS:
            argv += ["--server", name]
        assert main(argv) == 0
        document = json.loads(capsys.readouterr().out)
    by_version: dict[str, list[dict]] = {}
    for cluster in document["clusters"]:
        by_version.setdefault(cluster["version"], []).append(cluster)
    assert sorted(by_version) == ["2.0.0a1", "2.0.0b1"]
    for version, found in by_version.items():
        shared, own = found
        assert shared["servers"] == ["notes-1x", "todo", "weather"] and own["servers"] == ["ledger"], version
        assert shared["summary"] == REMOVED
    a1 = by_version["2.0.0a1"][0]
    assert a1["quotes"] == [{"version": "2.0.0a1", "text": "FastMCP is renamed to MCPServer.", "url": RELEASE_PAGE}]
    figures = document["figures"]
    assert figures == {"failing_results": 8, "clusters": 4, "signatures": 2, "shared": 2, "explained": 2}
    assert {c["first_version"] for c in document["clusters"]} == {"2.0.0a1"}
    print(f"\nclusters e2e figures: {figures}")
