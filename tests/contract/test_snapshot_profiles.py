"""Snapshots under several client profiles, and capabilities kept whole: real server processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.contract.fixtures.servers import DEEP_CAPABILITIES
from tests.contract.helpers import extra_server_command, stdio_target
from watcher.contract.diff import diff_snapshots
from watcher.contract.report import render
from watcher.contract.snapshot import take_snapshot_sync

pytestmark = [pytest.mark.timeout(180)]


def test_a_tool_now_offered_only_with_elicitation_is_reported_under_the_bare_profile(tmp_path: Path) -> None:
    old = take_snapshot_sync(stdio_target([*extra_server_command("capability-tools"), "--v1"]), tmp_path / "v1")
    new = take_snapshot_sync(stdio_target(extra_server_command("capability-tools")), tmp_path / "v2")
    assert set(old["profiles"]) == set(new["profiles"]) == {"typical", "none"}
    bare = json.loads((tmp_path / "v2" / "profiles" / "none" / "legacy" / "tools.json").read_text())
    assert [t["name"] for t in bare] == ["lookup"]
    manifest = json.loads((tmp_path / "v2" / "snapshot.json").read_text())
    assert [p["name"] for p in manifest["clientProfiles"]] == ["typical", "none"]

    report = diff_snapshots(tmp_path / "v1", tmp_path / "v2")
    breaking = [(c["rule"], c["name"], c["profile"]) for c in report["changes"] if c["breaksClients"]]
    assert breaking == [("tool_requires_capability", "ask_user", "none")]
    assert "elicitation" in report["changes"][0]["hint"]
    markdown = render(report, "markdown")
    assert "| Era | Profile | List |" in markdown
    assert "| both | none | tools | `ask_user` |" in markdown


def test_the_second_profile_shares_the_first_ones_version_probes(tmp_path: Path) -> None:
    take_snapshot_sync(stdio_target(extra_server_command("capability-tools")), tmp_path / "s", era="legacy")
    main = json.loads((tmp_path / "s" / "server.json").read_text())
    bare = json.loads((tmp_path / "s" / "profiles" / "none" / "server.json").read_text())
    assert main["supportedVersionsSource"] == bare["supportedVersionsSource"] == "initialize-probes"
    assert bare["supportedVersions"] == main["supportedVersions"] and bare["versionProbesFrom"] == "typical"
    assert bare["clientProfile"] == {"name": "none", "capabilities": []}


def test_one_profile_only_writes_no_profiles_folder(tmp_path: Path) -> None:
    target = stdio_target(extra_server_command("capability-tools"))
    take_snapshot_sync(target, tmp_path / "s", era="legacy")
    take_snapshot_sync(target, tmp_path / "s", era="legacy", client_profile_name="typical")
    assert not (tmp_path / "s" / "profiles").exists()


def test_deep_capability_objects_are_kept_whole(tmp_path: Path) -> None:
    command = extra_server_command("deep-capabilities")
    take_snapshot_sync(stdio_target(command), tmp_path / "old", era="legacy", client_profile_name="typical")
    record = json.loads((tmp_path / "old" / "server.json").read_text())
    assert record["capabilities"] == DEEP_CAPABILITIES
    assert record["capabilitiesSource"] == "raw-initialize"

    take_snapshot_sync(
        stdio_target([*command, "--drop-nested"]), tmp_path / "new", era="legacy", client_profile_name="typical"
    )
    report = diff_snapshots(tmp_path / "old", tmp_path / "new")
    removed = [c for c in report["changes"] if c["breaksClients"]]
    # `tools` is left empty below `requests`, and an empty capability object declares nothing: named there.
    assert [(c["rule"], c["path"]) for c in removed] == [("capability_removed", "capabilities.tasks.requests.tools")]


def test_the_modern_sessions_share_one_process_and_each_declares_its_own_profile(tmp_path: Path) -> None:
    """Two profiles, both eras: three server processes (one per legacy session, one for the modern
    era's stateless requests), and the shared one still sees each profile's capabilities."""
    starts = tmp_path / "starts"
    counting = ["/bin/sh", "-c", 'echo start >> "$0" && exec "$@"', str(starts)]
    command = [*counting, *extra_server_command("capability-tools")]
    summary = take_snapshot_sync(stdio_target(command), tmp_path / "s")
    assert {era: record["status"] for eras in summary["profiles"].values() for era, record in eras.items()} == {
        "legacy": "ok",
        "modern": "ok",
    }
    assert starts.read_text().split() == ["start"] * 3
    for era in ("legacy", "modern"):
        typical = json.loads((tmp_path / "s" / era / "tools.json").read_text())
        bare = json.loads((tmp_path / "s" / "profiles" / "none" / era / "tools.json").read_text())
        assert [t["name"] for t in typical] == ["ask_user", "lookup"] and [t["name"] for t in bare] == ["lookup"]
        server = json.loads((tmp_path / "s" / "profiles" / "none" / era / "server.json").read_text())
        assert server["clientProfile"] == {"name": "none", "capabilities": []}


def test_a_modern_session_the_shared_process_fails_is_taken_again_on_a_process_of_its_own(tmp_path: Path) -> None:
    """The server exits on its second tools/list: the second profile's modern session fails on the shared
    process, and is retaken alone, so the snapshot is what a process per session would have given."""
    starts = tmp_path / "starts"
    counting = ["/bin/sh", "-c", 'echo start >> "$0" && exec "$@"', str(starts)]
    command = [*counting, *extra_server_command("capability-tools"), "--one-list"]
    summary = take_snapshot_sync(stdio_target(command), tmp_path / "s", era="modern")
    assert {name: eras["modern"]["status"] for name, eras in summary["profiles"].items()} == {
        "typical": "ok",
        "none": "ok",
    }
    assert starts.read_text().split() == ["start"] * 2
    bare = json.loads((tmp_path / "s" / "profiles" / "none" / "tools.json").read_text())
    assert [t["name"] for t in bare] == ["lookup"]
