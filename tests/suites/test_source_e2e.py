"""End to end from git: the Python example in a local repository (its baseline snapshot and expected
failures inside it), checked on a real `mcp` version with the real conformance suite; a new commit
that changes a tool's description shows up as that change in the next run's contract diff."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.suites.helpers import LIBRARY, commit_all, head, new_repo, write_config
from watcher.core.store import Store
from watcher.suites.runner import run_check
from watcher.suites.worker import process_queue, queue_for_release

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

OLD = "Look up a book by title and author (in `language`, default English) and return its ISBN and year."
NEW = "Find a book by its title and author; answers its ISBN and year (language defaults to English)."


def test_a_server_from_git_is_checked_at_its_commit_and_a_new_commit_changes_the_next_diff(tmp_path: Path):
    repo = new_repo(tmp_path / "books-mcp", copy_from=LIBRARY, into="server")
    url = f"file://{repo}"
    server = {
        "name": "books-git",
        "team": "books",
        "sdk": "python",
        "language": "python",
        "source": {"git": url, "ref": "main", "subdir": "server"},
        "transport": "http",
        "start": ["python", "-m", "library_server", "--port", "{port}"],
        "baseline_sdk_version": "2.3.0",
        # Paths inside the repository: the team owns them and changes them by a commit.
        "baseline_snapshot": "server/baseline-snapshot",
        "expected_failures": "server/conformance-baseline.yml",
        "requirements": ["2025-11-25"],
        "timeouts": {"install": 300, "start": 60, "suite": 300, "snapshot": 60},
    }
    loaded = write_config(tmp_path, [server], tmp_path / "envs", git_protocols=["file"])
    store = Store(tmp_path / "state.db")
    first_commit = head(repo)
    assert queue_for_release(loaded, store, "python", "2.3.0", prerelease=True) == ["books-git"]
    [first] = process_queue(loaded, store)
    report = first["report"]
    first_install = report["install"]["path"]
    assert report["source"]["ok"] and report["source"]["commit"] == first_commit
    assert report["verdict"] == "pass", report["reasons"]
    assert report["contract"]["changes"] == []
    assert report["contract"]["baseline_snapshot"].startswith(str(Path(report["run_dir"]) / "source"))
    [conformance] = report["conformance"]
    assert conformance["expected_failures"] and not conformance["unexpected_failures"]
    [row] = store.outbox()
    assert f"commit {first_commit[:12]} of {url} (main)" in row["text"]
    assert f"commit {first_commit[:12]}" in str(row["blocks"])

    versions = repo / "server" / "library_server" / "versions.py"
    versions.write_text(versions.read_text().replace(OLD, NEW))
    commit_all(repo, "reword find_book_by_author")
    second_commit = head(repo)
    report = run_check(loaded, "books-git", "2.3.0")
    assert report["source"]["commit"] == second_commit != first_commit
    changed = [c for c in report["contract"]["changes"] if c.get("name") == "find_book_by_author"]
    assert changed, report["contract"]["changes"]
    assert all("description" in (c.get("kind", "") + c.get("path", "")) for c in changed)
    assert any(c.get("affectsModels") for c in changed)
    assert report["install"]["path"] != first_install  # a new tree is a new environment
