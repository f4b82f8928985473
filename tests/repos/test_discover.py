"""Discovery through GitHub's REST API (the loopback GitHub fake), code through a loopback git host."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.git_http_server import FakeGitHost
from tests.fakes.github_server import FakeGitHub
from tests.repos.helpers import TEAM_FILE, central_config, team_repo
from tests.suites.helpers import bare_clone
from watcher.core.store import Store
from watcher.ops.status import collect_status, render_status
from watcher.repos.discover import discovery_error
from watcher.repos.sync import sync_repos

DATE = "2026-11-01T12:00:00Z"


def test_the_organisations_repositories_with_the_file_and_topic_are_read(tmp_path: Path):
    hosted = tmp_path / "hosted"
    for name in ("books", "search", "old"):
        bare_clone(team_repo(tmp_path / "src" / name, name), hosted / f"{name}.git")
    with FakeGitHost(root=hosted, token="t0ken") as host, FakeGitHub() as gh:
        gh.set_org_repos(
            "acme",
            [
                {"name": "books", "clone_url": host.repo_url("books.git"), "topics": ["mcp"]},
                {"name": "search", "clone_url": host.repo_url("search.git"), "topics": ["mcp"]},
                {"name": "old", "clone_url": host.repo_url("old.git"), "topics": ["mcp"], "archived": True},
                {"name": "gateway", "clone_url": host.repo_url("gateway.git")},
            ],
        )
        gh.add_commit("acme/books", ".mcp-watcher.yaml", TEAM_FILE.format(name="books"), DATE)
        gh.add_commit("acme/old", ".mcp-watcher.yaml", TEAM_FILE.format(name="old"), DATE)
        gh.add_commit("acme/gateway", ".mcp-watcher.yaml", TEAM_FILE.format(name="gateway"), DATE)
        # search has the topic but no team file: not a team repository
        discover = {
            "github": {"org": "acme", "team": "books", "topic": "mcp", "api_url": gh.api_url, "token_env": "ACME_TOKEN"}
        }
        loaded = central_config(tmp_path, [], discover=discover, http_client={"retries": 0})
        store = Store(tmp_path / "state" / "watcher.db")
        env = {"ACME_TOKEN": "t0ken"}

        result = sync_repos(loaded, store, environ=env)
        assert [s.name for s in result.config.servers] == ["books"]
        assert result.config.server("books").source.git == host.repo_url("books.git")  # type: ignore[union-attr]
        first = [(r.method, r.path, r.status) for r in gh.requests]
        assert first == [
            ("GET", "/orgs/acme/repos", 200),
            ("GET", "/repos/acme/books/contents/.mcp-watcher.yaml", 200),
            ("GET", "/repos/acme/search/contents/.mcp-watcher.yaml", 404),
        ]
        assert all(r.headers.get("authorization") == "Bearer t0ken" for r in gh.requests)

        # The scheduled refresh asks again conditionally: nothing changed, every answer a 304.
        gh.requests.clear()
        sync_repos(loaded, store, environ=env)
        assert [r.status for r in gh.requests if r.path != "/repos/acme/search/contents/.mcp-watcher.yaml"] == [
            304,
            304,
        ]

        # GitHub failing is a reported result; the repositories found before stay in use.
        gh.fail_next("/orgs/acme/repos", status=503)
        failed = sync_repos(loaded, store, environ=env)
        assert [s.name for s in failed.config.servers] == ["books"]
        assert "HTTP 503" in (discovery_error(store) or "")
        assert "discovery: GitHub organisation acme (topic mcp) could not be read: " in render_status(
            collect_status(loaded, store)
        )
