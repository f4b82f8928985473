"""Release notes: the matching of lines to a failure's symbols, a package's changelog, the size bound, and hostile
notes (Slack markup in a release body) quoted escaped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.clusters.config import write_cluster_config
from tests.clusters.helpers import recorded, start_failure
from tests.fakes.registry_server import FIXTURES as REGISTRY_FIXTURES
from tests.fakes.registry_server import serve_registry
from watcher.clusters.record import after_result
from watcher.clusters.release_notes import changelog_sections, matching_lines
from watcher.core.store import Store

NOTES = "github/repos/modelcontextprotocol/python-sdk/releases/tags/v2.0.0a1.json"


def _report() -> dict:
    return start_failure("weather", recorded("weather_tools-2.0.0a1"))


def test_lines_match_whole_symbols_in_any_case_and_skip_common_words():
    body = "- FastMCP is renamed to MCPServer.\n* The Context object moved\n- fastmcpx is unrelated\n1. server tweaks"
    assert matching_lines(body, ["mcp.server.fastmcp", "fastmcp", "FastMCP", "Context", "server"]) == [
        "FastMCP is renamed to MCPServer."
    ]


def test_a_changelog_in_the_package_is_read_by_version(tmp_path: Path):
    changelog = "# Changelog\n\n## [2.0.0a1] - 2026-06-11\n- FastMCP is renamed to MCPServer.\n\n## 1.27.2\n- fixes\n"
    assert changelog_sections(changelog)["2.0.0a1"][0] == "- FastMCP is renamed to MCPServer."
    with serve_registry() as registry:
        notes = {"changelog": "CHANGELOG.md"}
        loaded = write_cluster_config(tmp_path, registry.base, threshold=1, notes=notes)
        store = Store(loaded.resolve(loaded.config.state))
        env = tmp_path / "env"
        package = env / "lib" / "python3.11" / "site-packages" / "mcp"
        package.mkdir(parents=True)
        (package / "CHANGELOG.md").write_text(changelog, encoding="utf-8")
        report = {**_report(), "install": {"ok": True, "path": str(env)}}
        [reply, upstream] = after_result(loaded, store, report, 1)
        assert registry.stats.requests == 0  # nothing asked of GitHub
    assert "Announced in 2.0.0a1's notes: “FastMCP is renamed to MCPServer.”" in reply.text
    assert "announced in 2.0.0a1's notes, migrate" in upstream.text


def test_notes_over_the_size_bound_are_refused_and_said(tmp_path: Path):
    with serve_registry() as registry:
        loaded = write_cluster_config(tmp_path, registry.base, threshold=1)
        store = Store(loaded.resolve(loaded.config.state))
        registry.fail("/" + NOTES.removesuffix(".json"), oversize=2 * 1024 * 1024)
        [reply, _] = after_result(loaded, store, _report(), 1)
    assert "No release notes could be read (not read: 2.0.0a1:" in reply.text and "refused" in reply.text


def test_hostile_release_notes_are_quoted_escaped(tmp_path: Path):
    root = tmp_path / "registry"
    shutil.copytree(REGISTRY_FIXTURES / "github", root / "github")
    hostile = json.loads((root / NOTES).read_text())
    hostile["body"] = "- FastMCP <!channel> is gone: <https://evil.example/x|migrate here> *now*"
    hostile["html_url"] = "javascript:alert(1)"
    (root / NOTES).write_text(json.dumps(hostile))
    with serve_registry(root) as registry:
        loaded = write_cluster_config(tmp_path, registry.base, threshold=1)
        store = Store(loaded.resolve(loaded.config.state))
        report = _report()
        [reply, upstream] = after_result(loaded, store, report, 1)
    # The hostile line was read and matched (its mark is in the finding) …
    [line] = report["cluster"]["notes"]["lines"]
    assert line["text"].startswith("FastMCP <!channel>") and line["url"] == "javascript:alert(1)"
    # … and reached Slack only escaped: no mention, no link of its own, no link to its address.
    for notice in (reply, upstream):
        sent = notice.text + json.dumps(notice.blocks)
        assert "&lt;!channel&gt;" in sent
        assert "<!channel>" not in sent and "<https://evil.example" not in sent and "|migrate here>" not in sent
        assert "<javascript:" not in sent


@pytest.mark.parametrize("tag", ["v{version}", "python-v{version}"])
def test_the_tag_template_names_the_release(tmp_path: Path, tag: str):
    with serve_registry() as registry:
        loaded = write_cluster_config(
            tmp_path, registry.base, threshold=1, notes={"repo": "modelcontextprotocol/python-sdk", "tag": tag}
        )
        store = Store(loaded.resolve(loaded.config.state))
        report = _report()
        after_result(loaded, store, report, 1)
    expected = [] if tag != "v{version}" else ["FastMCP is renamed to MCPServer."]
    assert [q["text"] for q in report["cluster"]["notes"]["lines"]] == expected
    if tag != "v{version}":
        assert report["cluster"]["notes"]["problems"] == ["2.0.0a1: no release notes published"]


def test_a_tag_without_its_version_placeholder_is_a_config_error_naming_the_key(tmp_path: Path):
    from watcher.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"sdks\[0\]\.release_notes\.tag|release_notes.*tag") as caught:
        write_cluster_config(tmp_path, "http://127.0.0.1:9", notes={"repo": "a/b", "tag": "v{major}"})
    assert "{version}" in str(caught.value)
