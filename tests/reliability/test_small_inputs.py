"""Class 11: small bad inputs are named for what they are, never passed off as something ordinary."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

from packaging.version import Version

from tests.fakes.mcp_history import MCP_PAGE, _file_version
from tests.reliability.conftest import python_only
from watcher.cli import main
from watcher.sources.events import ReleaseEvent
from watcher.sources.notices import release_notice

LIBRARY_SNAPSHOT = Path(__file__).resolve().parents[2] / "examples" / "library" / "baseline-snapshot"


def test_a_prerelease_removed_from_the_registry_is_no_longer_the_newest(
    registry, registry_root, history, write_config, capsys
):
    config = write_config(python_only(registry))
    history.before("2.0.0")  # 2.0.0a1 … 2.0.0rc1 listed, 2.0.0 not yet
    assert main(["--config", str(config), "poll"]) == 0
    capsys.readouterr()
    assert main(["--config", str(config), "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sources"][0]["newest_prerelease"] == "2.0.0rc1"
    page = registry_root / MCP_PAGE  # the registry withdraws rc1
    data = json.loads(page.read_text())
    data["versions"] = [v for v in data["versions"] if v != "2.0.0rc1"]
    data["files"] = [f for f in data["files"] if _file_version(f["filename"]) != Version("2.0.0rc1")]
    page.write_text(json.dumps(data))
    assert main(["--config", str(config), "poll"]) == 0
    capsys.readouterr()
    assert main(["--config", str(config), "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sources"][0]["newest_prerelease"] == "2.0.0b2"


def test_an_unparseable_version_is_announced_as_unparseable():
    release = ReleaseEvent(
        registry="pypi",
        package="mcp",
        version="2.0.0-weird!build",
        prerelease=True,
        yanked=False,
        sdk="python",
        first_seen="2026-11-30T10:00:00Z",
        published=None,
    )
    text, blocks = release_notice(release, [])
    assert text.startswith("New unparseable version: mcp 2.0.0-weird!build (python SDK)")
    assert "the pep440 rules cannot read it, so it is treated as a pre-release" in json.dumps(blocks)
    release = dataclasses.replace(release, version="2.0.0b1")
    assert release_notice(release, [])[0].startswith("New pre-release: mcp 2.0.0b1")


def test_diff_refuses_a_truncated_snapshot_manifest(tmp_path: Path, capsys):
    baseline, candidate = tmp_path / "baseline", tmp_path / "candidate"
    shutil.copytree(LIBRARY_SNAPSHOT, baseline)
    shutil.copytree(LIBRARY_SNAPSHOT, candidate)
    manifest = candidate / "snapshot.json"
    manifest.write_text(manifest.read_text()[:40], encoding="utf-8")
    assert main(["diff", str(baseline), str(candidate)]) == 2
    err = capsys.readouterr().err
    assert f"unusable input: {manifest}: line " in err and "invalid JSON" in err
    assert main(["diff", str(baseline), str(baseline)]) == 0  # an intact copy still diffs
