"""Results filed in clusters as the suite worker files them: the crossing tells each team once and the operators
once, later results say it in their own notice, the release notes are read once per version (conditionally when
asked again), and a server broken for its own reason stays out. Real failure texts (recorded), real SQLite,
the release notes on a loopback GitHub."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clusters.config import write_cluster_config
from tests.clusters.helpers import recorded, start_failure
from tests.fakes.registry_server import serve_registry
from watcher.clusters.record import after_result
from watcher.core.store import Store
from watcher.suites.notices import render

NOTES_PATH = "/github/repos/modelcontextprotocol/python-sdk/releases/tags/v2.0.0a1"
RELEASE_PAGE = "https://github.com/modelcontextprotocol/python-sdk/releases/tag/v2.0.0a1"


@pytest.fixture
def registry():
    with serve_registry() as fake:
        yield fake


def _report(server: str, recording: str) -> dict:
    return start_failure(server, recorded(f"{recording}-2.0.0a1"))


def test_the_third_team_crosses_the_threshold_each_team_is_told_once_and_the_operators_get_a_draft(
    tmp_path: Path, registry
):
    loaded = write_cluster_config(tmp_path, registry.base)
    store = Store(loaded.resolve(loaded.config.state))
    first = _report("notes-1x", "fastmcp_notes")
    assert after_result(loaded, store, first, 1) == []
    assert first["cluster"]["teams"] == 1 and first["cluster"]["likely_sdk"] is False
    assert after_result(loaded, store, _report("weather", "weather_tools"), 2) == []
    assert registry.stats.requests == 0  # no notes read before a cluster is likely the SDK's

    third = _report("todo", "todo_server")
    notices = after_result(loaded, store, third, 3)
    replies = [n for n in notices if n.kind == "cluster"]
    [upstream] = [n for n in notices if n.kind == "cluster_upstream"]
    assert sorted(n.team for n in replies) == ["books", "forecasts", "planning"]
    assert {n.thread_of for n in replies} == {f"release:python:2.0.0a1:{t}" for t in ("books", "forecasts", "planning")}
    assert all("The same failure on 3 servers of 3 teams on python 2.0.0a1" in n.text for n in replies)
    assert all("FastMCP is renamed to MCPServer" in n.text for n in replies)
    quoted = replies[0].blocks[1]["text"]["text"]
    assert f"<{RELEASE_PAGE}|2.0.0a1 release notes>" in quoted and "\n> FastMCP is renamed to MCPServer. (" in quoted
    assert upstream.channel == "#mcp-platform"
    assert "announced in 2.0.0a1's notes, migrate" in upstream.text
    assert "pip install 'mcp==2.0.0a1'" in upstream.text
    assert "python -c 'from mcp.server.fastmcp import FastMCP'" in upstream.text
    assert "ModuleNotFoundError: No module named 'mcp.server.fastmcp'" in upstream.text
    assert third["cluster"]["likely_sdk"] is True and third["cluster"]["notes"]["lines"][0]["url"] == RELEASE_PAGE
    assert registry.stats.by_path[NOTES_PATH] == 1

    # The broken-for-its-own-reason server: a cluster of its own, nothing said.
    ledger = _report("ledger", "ledger_server")
    assert after_result(loaded, store, ledger, 4) == []
    assert ledger["cluster"]["signature"] != third["cluster"]["signature"] and ledger["cluster"]["teams"] == 1

    # A rerun of a member: no second reply; its own notice says it; the notes are not read again.
    again = _report("todo", "todo_server")
    assert after_result(loaded, store, again, 5) == []
    text, blocks = render({**again, "run_id": "r5"})
    assert "The same failure on 3 servers of 3 teams — likely the SDK" in text
    assert any("likely the SDK" in str(b) for b in blocks)
    assert registry.stats.by_path[NOTES_PATH] == 1

    [sdk_cluster, own] = sorted(store.clusters(), key=lambda c: -len(c["servers"]))
    assert sdk_cluster["servers"] == ["notes-1x", "todo", "weather"] and sdk_cluster["crossed"] is not None
    assert own["servers"] == ["ledger"] and own["crossed"] is None


def test_a_server_that_passes_on_a_rerun_leaves_its_cluster(tmp_path: Path, registry):
    loaded = write_cluster_config(tmp_path, registry.base)
    store = Store(loaded.resolve(loaded.config.state))
    after_result(loaded, store, _report("weather", "weather_tools"), 1)
    after_result(loaded, store, {**_report("weather", "weather_tools"), "verdict": "pass"}, 2)
    assert store.clusters() == []


def test_notes_that_could_not_be_read_are_said_and_asked_again_conditionally(tmp_path: Path, registry):
    loaded = write_cluster_config(tmp_path, registry.base, threshold=1)
    store = Store(loaded.resolve(loaded.config.state))
    registry.fail(NOTES_PATH, status=503, times=1)
    first = _report("notes-1x", "fastmcp_notes")
    [reply, _] = after_result(loaded, store, first, 1)
    assert "No release notes could be read (not read: 2.0.0a1:" in reply.text and "HTTP 503" in reply.text
    # The next result asks again and gets the notes; a third asks nothing (stored once read).
    second = _report("weather", "weather_tools")
    after_result(loaded, store, second, 2)
    assert second["cluster"]["notes"]["sentence"].startswith("Announced in 2.0.0a1's notes: “FastMCP is renamed")
    # Stored notes dropped (as after a failed refresh): asked again with the ETag, answered 304 from the cache.
    store.put_release_notes("python", "2.0.0a1", "error", None, [], "dropped")
    third = _report("todo", "todo_server")
    after_result(loaded, store, third, 3)
    assert registry.stats.not_modified == 1 and third["cluster"]["notes"]["lines"][0]["version"] == "2.0.0a1"
    assert registry.stats.by_path[NOTES_PATH] == 3


def test_no_release_notes_configured_is_said(tmp_path: Path, registry):
    loaded = write_cluster_config(tmp_path, registry.base, threshold=1, notes={})
    store = Store(loaded.resolve(loaded.config.state))
    notices = after_result(loaded, store, _report("weather", "weather_tools"), 1)
    assert "No release notes configured for this SDK." in notices[0].text
    assert "not announced in the release notes: worth reporting upstream" in notices[1].text
    assert registry.stats.requests == 0


def test_nothing_in_the_notes_matches_is_said(tmp_path: Path, registry):
    loaded = write_cluster_config(tmp_path, registry.base, threshold=1)
    store = Store(loaded.resolve(loaded.config.state))
    [reply, _] = after_result(loaded, store, _report("ledger", "ledger_server"), 1)
    assert "Nothing in the notes of 2.0.0a1 matches." in reply.text


def test_errors_shared_by_every_team_cluster_but_are_never_likely_the_sdk(tmp_path: Path, registry):
    loaded = write_cluster_config(tmp_path, registry.base, threshold=2)
    store = Store(loaded.resolve(loaded.config.state))
    reports = []
    for server in ("notes-1x", "weather", "todo"):
        reason = "mcp 2.0.0a1: could not install: the registry answered HTTP 503"
        reasons = [{"verdict": "error", "reason": reason}]
        report = {**_report(server, "fastmcp_notes"), "verdict": "error", "reasons": reasons}
        report.pop("start")
        reports.append(report)
        assert after_result(loaded, store, report, len(reports)) == []
    assert reports[-1]["cluster"]["teams"] == 3 and reports[-1]["cluster"]["likely_sdk"] is False
    [cluster] = store.clusters()
    assert cluster["rule"] == "reason_text" and cluster["crossed"] is None
