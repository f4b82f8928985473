"""End to end on real servers: the library example's four versions over stdio and streamable HTTP, in
both eras; a paginated server that changes mid-walk; a tool list that depends on the auth header;
servers that refuse an era, crash or hang."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from mcp.client import session as mcp_session

from tests.contract.helpers import (
    LIBRARY,
    VARIANTS,
    extra_server_command,
    http_server,
    library_command,
    run_cli,
    stdio_target,
)
from watcher.contract.diff import SnapshotError, diff_snapshots
from watcher.contract.handshake import DEFAULT_CLIENT_PROFILES, LEGACY_PROBE_VERSIONS
from watcher.contract.report import render, worst_level
from watcher.contract.snapshot import SnapshotTarget, take_snapshot_sync

# One worker runs the whole module, so the module-scoped snapshots are taken once.
pytestmark = [pytest.mark.timeout(600), pytest.mark.xdist_group("contract-e2e")]

LOADED = 120
"""An era's whole session, the server's start included, on a loaded machine (30 s was passed at load 10-17);
the hang and crash tests below keep short ones of their own."""


@pytest.fixture(scope="module")
def stdio_snapshots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("stdio")
    out = {}
    for variant in VARIANTS:
        summary = take_snapshot_sync(stdio_target(library_command(variant)), root / variant, timeout=LOADED)
        assert {era: r["status"] for era, r in summary["eras"].items()} == {"legacy": "ok", "modern": "ok"}
        out[variant] = root / variant
    return out


@pytest.fixture(scope="module")
def http_snapshots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("http")
    out = {}
    for variant in VARIANTS:
        with http_server(library_command(variant)) as url:
            summary = take_snapshot_sync(SnapshotTarget(url=url), root / variant, timeout=LOADED)
        assert {era: r["status"] for era, r in summary["eras"].items()} == {"legacy": "ok", "modern": "ok"}
        out[variant] = root / variant
    return out


def _kinds(report: dict) -> set[tuple[str, str, str | None]]:
    return {(c["name"], c["kind"], c["path"]) for c in report["changes"]}


def _assert_seed_verdicts(snaps: dict[str, Path]) -> None:
    # v1 → v2: an optional argument with a default and a new output field: additive, breaks no client.
    report = diff_snapshots(snaps["v1"], snaps["v2"], "v1", "v2")
    assert worst_level(report) == "models"
    assert _kinds(report) == {
        ("find_book", "optional_parameter_added", "inputSchema.properties.language"),
        ("find_book", "output_property_added", "outputSchema.properties.year"),
        ("find_book", "description_changed", "description"),
    }
    assert {c["era"] for c in report["changes"]} == {"both"}

    # v2 → v3, the breaking way: author becomes required.
    report = diff_snapshots(snaps["v2"], snaps["v3-breaking"])
    breaking = [c for c in report["changes"] if c["breaksClients"]]
    assert [(c["kind"], c["path"], c["before"], c["after"]) for c in breaking] == [
        ("required_parameter_added", "inputSchema.required", ["title"], ["title", "author"])
    ]
    assert breaking[0]["affectsModels"] is True

    # v2 → v3, the compatible way: a new tool beside the old one, whose description says deprecated.
    report = diff_snapshots(snaps["v2"], snaps["v3"])
    assert worst_level(report) == "models"
    assert _kinds(report) == {
        ("find_book_by_author", "added", None),
        ("find_book", "description_changed", "description"),
    }
    assert "Deprecated" in next(c for c in report["changes"] if c["kind"] == "description_changed")["after"]

    # Reversed: a v2-era client meets a v1 server — the argument and the output field are gone. The input
    # object admits unknown keys, so a call sending `language` still validates and the value is silently
    # ignored (dangerous); the output field's readers break.
    report = diff_snapshots(snaps["v2"], snaps["v1"])
    assert worst_level(report) == "clients"
    assert {(c["kind"], c["path"]) for c in report["changes"] if c["breaksClients"]} == {
        ("output_property_removed", "outputSchema.properties.year"),
    }
    assert {(c["kind"], c["path"]) for c in report["changes"] if c["grade"] == "dangerous"} == {
        ("parameter_ignored", "inputSchema.properties.language"),
    }


def test_seed_verdicts_over_stdio(stdio_snapshots: dict[str, Path]) -> None:
    _assert_seed_verdicts(stdio_snapshots)


def test_seed_verdicts_over_streamable_http(http_snapshots: dict[str, Path]) -> None:
    _assert_seed_verdicts(http_snapshots)


def test_snapshot_contents(stdio_snapshots: dict[str, Path]) -> None:
    modern = stdio_snapshots["v3"] / "modern"
    tools = json.loads((modern / "tools.json").read_text())
    assert [t["name"] for t in tools] == ["find_book", "find_book_by_author"]
    assert not any("_meta" in t for t in tools)
    for name in ("resources.json", "resource-templates.json", "prompts.json"):
        assert len(json.loads((modern / name).read_text())) == 1
    server = json.loads((modern / "server.json").read_text())
    assert server["supportedVersions"] == ["2026-07-28"] and server["protocolVersion"] == "2026-07-28"
    assert server["instructions"].startswith("Book lookup")
    errors = json.loads((modern / "errors.json").read_text())
    assert errors["unsupported_protocol_version"]["code"] == -32022
    assert errors["unsupported_protocol_version"]["supported"] == ["2026-07-28"]
    assert errors["unknown_tool"]["mode"] == "tool_error"
    assert errors["unknown_resource"]["mode"] == "jsonrpc_error"
    assert errors["missing_required_argument"]["mode"] == "tool_error"
    legacy_server = json.loads((stdio_snapshots["v3"] / "legacy" / "server.json").read_text())
    assert legacy_server["protocolVersion"] == "2025-11-25"
    assert "unsupported_protocol_version" not in json.loads(
        (stdio_snapshots["v3"] / "legacy" / "errors.json").read_text()
    )


def test_transport_and_era_do_not_change_the_contract(stdio_snapshots, http_snapshots) -> None:
    for variant in VARIANTS:
        assert diff_snapshots(stdio_snapshots[variant], http_snapshots[variant])["changes"] == []
        other_era = diff_snapshots(stdio_snapshots[variant] / "legacy", stdio_snapshots[variant] / "modern")
        assert other_era["changes"] == []


def test_same_contract_twice_is_byte_identical(stdio_snapshots: dict[str, Path], tmp_path: Path) -> None:
    again = tmp_path / "again"
    take_snapshot_sync(stdio_target(library_command("v2")), again, era="modern", timeout=LOADED)
    assert diff_snapshots(stdio_snapshots["v2"] / "modern", again)["changes"] == []
    for name in ("tools.json", "resources.json", "resource-templates.json", "prompts.json", "server.json"):
        assert (again / name).read_bytes() == (stdio_snapshots["v2"] / "modern" / name).read_bytes()


def test_verdicts_in_markdown_and_junit(stdio_snapshots: dict[str, Path]) -> None:
    report = diff_snapshots(stdio_snapshots["v2"], stdio_snapshots["v3-breaking"], "v2", "v3-breaking")
    markdown = render(report, "markdown")
    breaking_section = markdown.split("### Breaks clients (1)")[1].split("###")[0]
    assert "required_parameter_added" in breaking_section and "`find_book`" in breaking_section
    suite = ET.fromstring(render(report, "junit")).find("testsuite")
    assert suite is not None
    assert [f.get("type") for f in suite.iter("failure")] == ["required_parameter_added"]
    compatible = diff_snapshots(stdio_snapshots["v2"], stdio_snapshots["v3"])
    suite = ET.fromstring(render(compatible, "junit")).find("testsuite")
    assert suite is not None and suite.get("failures") == "0" and len(suite.findall("testcase")) == 2


def test_cli_snapshot_and_diff(
    tmp_path: Path, stdio_snapshots: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cli-v3b"
    code = run_cli(
        ["snapshot", "--out", str(out), "--era", "legacy", "--cwd", str(LIBRARY), "--", *library_command("v3-breaking")]
    )
    assert code == 0
    assert "legacy: ok (tools 1" in capsys.readouterr().out
    assert json.loads((out / "snapshot.json").read_text())["eras"] == {"legacy": "ok"}
    assert run_cli(["diff", str(stdio_snapshots["v2"]), str(out), "--format", "markdown"]) == 1
    assert run_cli(["diff", str(stdio_snapshots["v2"]), str(stdio_snapshots["v3"]), "--format", "junit"]) == 0


@pytest.mark.parametrize("mode", ["paging-shift", "paging-expire"])
def test_paginated_list_that_changes_mid_walk(tmp_path: Path, mode: str) -> None:
    summary = take_snapshot_sync(stdio_target(extra_server_command(mode)), tmp_path, timeout=LOADED)
    assert {r["status"] for r in summary["eras"].values()} == {"ok"}
    expected = ["tool_0", "tool_1", "tool_2", "tool_3", "tool_4", "tool_new"]
    for era in ("legacy", "modern"):
        assert [t["name"] for t in json.loads((tmp_path / era / "tools.json").read_text())] == expected
    stats = json.loads((tmp_path / "snapshot.json").read_text())["lists"]
    # Walk one was abandoned when the list changed; walks two and three agreed.
    assert stats["modern"]["tools"] == {"pages": 3, "walks": 3}


def test_paginated_list_over_http(tmp_path: Path) -> None:
    with http_server(extra_server_command("paging-expire")) as url:
        summary = take_snapshot_sync(SnapshotTarget(url=url), tmp_path, era="modern", timeout=LOADED)
    assert summary["eras"]["modern"]["counts"]["tools"] == 6


def test_tool_list_depends_on_the_auth_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reader, admin = tmp_path / "reader", tmp_path / "admin"
    monkeypatch.setenv("MCP_WATCHER_PROFILE_READER", "Authorization: Bearer reader-token\n")
    with http_server(extra_server_command("auth")) as url:
        assert run_cli(["snapshot", "--url", url, "--out", str(reader), "--profile", "reader"]) == 0
        assert (
            run_cli(["snapshot", "--url", url, "--out", str(admin), "--header", "Authorization: Bearer admin-token"])
            == 0
        )
    manifest = json.loads((reader / "snapshot.json").read_text())
    assert manifest["profile"] == "reader" and manifest["headerNames"] == ["Authorization"]
    assert "reader-token" not in "".join(p.read_text() for p in reader.rglob("*.json"))
    widened = diff_snapshots(reader, admin)
    assert {(c["name"], c["kind"], c["era"]) for c in widened["changes"]} == {("delete_book", "added", "both")}
    narrowed = diff_snapshots(admin, reader)
    assert worst_level(narrowed) == "clients"


def test_dropping_an_era_is_a_removed_protocol_version(tmp_path: Path, stdio_snapshots: dict[str, Path]) -> None:
    modern_only = take_snapshot_sync(stdio_target(extra_server_command("modern-only")), tmp_path / "m", timeout=LOADED)
    assert modern_only["eras"]["legacy"]["status"].startswith("unsupported: initialize failed with -32601")
    assert modern_only["eras"]["modern"]["status"] == "ok"
    report = diff_snapshots(stdio_snapshots["v2"], tmp_path / "m")
    # The legacy era's probes found every known legacy revision accepted: dropping the era removes each.
    assert [(c["kind"], c["name"], c["era"], c["breaksClients"]) for c in report["changes"]] == [
        ("protocol_version_removed", version, "legacy", True) for version in LEGACY_PROBE_VERSIONS
    ]
    legacy_only = take_snapshot_sync(stdio_target(extra_server_command("legacy-only")), tmp_path / "l", timeout=LOADED)
    assert legacy_only["eras"]["modern"]["status"].startswith("unsupported: server/discover failed")
    back = diff_snapshots(tmp_path / "l", stdio_snapshots["v2"])
    assert [(c["kind"], c["name"], c["era"]) for c in back["changes"]] == [
        ("protocol_version_added", "2026-07-28", "modern")
    ]


def test_server_that_crashes_or_hangs_is_a_recorded_result(tmp_path: Path) -> None:
    crash = [sys.executable, "-c", "import sys; sys.stderr.write('ImportError: no MCPServer here\\n'); sys.exit(3)"]
    summary = take_snapshot_sync(stdio_target(crash), tmp_path / "crash", era="legacy", timeout=20)
    status = summary["eras"]["legacy"]["status"]
    assert status.startswith("error:") and "ImportError: no MCPServer here" in status
    hang = [sys.executable, "-c", "import time; time.sleep(60)"]
    summary = take_snapshot_sync(stdio_target(hang), tmp_path / "hang", era="modern", timeout=2)
    assert summary["eras"]["modern"]["status"].startswith("error: timed out after 2 s")
    with pytest.raises(SnapshotError, match="snapshot failed"):
        diff_snapshots(tmp_path / "hang", tmp_path / "crash")
    unreachable = take_snapshot_sync(SnapshotTarget(url="http://127.0.0.1:9/mcp"), tmp_path / "none", timeout=10)
    assert all(r["status"].startswith("error:") for r in unreachable["eras"].values())
    assert run_cli(["diff", str(tmp_path / "none"), str(tmp_path / "hang")]) == 2


def test_a_stdio_server_slower_to_start_than_the_sdks_discover_wait_is_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK waits a fixed 10 s for server/discover, the first request a stdio server gets; one still
    # starting on a loaded machine answered later, and its modern era was lost though `timeouts.snapshot`
    # allowed far more. Here the wait is 0.5 s and the server takes 2 s to start.
    monkeypatch.setattr(mcp_session, "DISCOVER_TIMEOUT_SECONDS", 0.5)
    started = tmp_path / "started"
    slow = [sys.executable, "-c", SLOW_START.format(mark=str(started)), *library_command("v1")[3:]]
    summary = take_snapshot_sync(stdio_target(slow), tmp_path / "slow", era="modern", timeout=LOADED)
    assert started.read_text() == "started after the wait"  # the slow start ran
    assert summary["eras"]["modern"]["status"] == "ok", summary


def test_a_server_that_itself_answers_discover_with_a_timeout_is_asked_once_and_its_era_refused(
    tmp_path: Path,
) -> None:
    # Only the SDK's own wait running out is asked again; a -32001 the server sends back at once is its answer.
    asks = tmp_path / "asks"
    command = [*extra_server_command("discover-says-timeout"), "--asks", str(asks)]
    summary = take_snapshot_sync(stdio_target(command), tmp_path / "t", era="modern", timeout=LOADED)
    # The server ran and said -32001 once to each client profile's session (a refused one retakes the next
    # profile on a process of its own), never again.
    assert asks.read_text() == "asked\n" * len(DEFAULT_CLIENT_PROFILES)
    assert (
        summary["eras"]["modern"]["status"]
        == "error: server/discover failed with -32001 timed out (said by the server)"
    )


SLOW_START = """
import runpy, sys, time
time.sleep(2)
open({mark!r}, "w").write("started after the wait")
sys.argv = ["library_server", *sys.argv[1:]]
runpy.run_module("library_server", run_name="__main__")
"""


def test_tool_with_invalid_x_mcp_header_is_kept_in_the_snapshot_and_flagged(tmp_path: Path) -> None:
    # The mcp client drops such a tool from list_tools() on a modern connection; the snapshot must not.
    take_snapshot_sync(stdio_target(extra_server_command("bad-header")), tmp_path / "bad", era="modern", timeout=LOADED)
    names = [t["name"] for t in json.loads((tmp_path / "bad" / "tools.json").read_text())]
    assert names == ["filter_books", "lookup"]
    (tmp_path / "base").mkdir()
    good = [t for t in json.loads((tmp_path / "bad" / "tools.json").read_text()) if t["name"] == "lookup"]
    (tmp_path / "base" / "tools.json").write_text(json.dumps(good))
    report = diff_snapshots(tmp_path / "base", tmp_path / "bad")
    assert {(c["name"], c["rule"], c["breaksClients"]) for c in report["changes"]} == {
        ("filter_books", "tool_added", False),
        ("filter_books", "x_mcp_header_invalid", True),
    }
