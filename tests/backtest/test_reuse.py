"""What decides whether a kept result is reused: the server's files, its settings, or — from git — the commit
its ref names now (asked with the real `git ls-remote` of a real local repository)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.backtest.helpers import FIXTURES, fastmcp_server, write_config
from tests.suites.helpers import commit_all, new_repo
from watcher.backtest.replay import fingerprint


def test_a_path_server_changes_fingerprint_with_its_files_and_settings(tmp_path: Path):
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "fastmcp_server", project)
    baseline = project / "conformance-baseline.yml"
    baseline.write_text("server:\n  - tools-call\n")
    loaded = write_config(
        tmp_path,
        "http://127.0.0.1:9/simple/",
        [fastmcp_server(path=str(project), expected_failures=str(baseline))],
        tmp_path,
    )
    server = loaded.config.server("notes-1x")
    first = fingerprint(loaded, server)
    assert first is not None and fingerprint(loaded, server) == first
    (project / "fastmcp_notes" / "__main__.py").write_text("raise SystemExit(1)\n")
    second = fingerprint(loaded, server)
    assert second != first
    baseline.write_text("server: []\n")  # excluded from the environment's key, but it decides the verdict
    third = fingerprint(loaded, server)
    assert third != second
    assert fingerprint(loaded, server.model_copy(update={"requirements": ["2025-11-25"]})) != third


def test_a_git_server_is_fingerprinted_by_the_commit_its_ref_names(tmp_path: Path):
    repo = new_repo(tmp_path / "repo", copy_from=FIXTURES / "fastmcp_server", into="server")
    source = {"git": str(repo), "ref": "main", "subdir": "server"}
    loaded = write_config(
        tmp_path,
        "http://127.0.0.1:9/simple/",
        [fastmcp_server(path=None, source=source)],
        tmp_path,
        git_protocols=["https", "ssh", "file"],
    )
    server = loaded.config.server("notes-1x")
    first = fingerprint(loaded, server)
    assert first is not None and fingerprint(loaded, server) == first
    (repo / "server" / "README.md").write_text("a new commit\n")
    commit_all(repo, "docs")
    assert fingerprint(loaded, server) not in (None, first)
    gone = server.model_copy(update={"source": server.source.model_copy(update={"git": str(tmp_path / "nowhere")})})
    assert fingerprint(loaded, gone) is None  # cannot be known now: nothing is reused
