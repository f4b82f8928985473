"""Discovery through GitHub's REST API (the loopback GitHub fake), code through a loopback git host: which
repositories hold servers, who owns each (the owners table, CODEOWNERS, GitHub teams), and the ones no rule
maps (listed, told to the operators, never read)."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.git_http_server import FakeGitHost
from tests.fakes.github_server import FakeGitHub
from tests.fakes.slack_server import FakeSlack
from tests.repos.helpers import PYPROJECT, TEAM_FILE, central_config, team_repo
from tests.suites.helpers import bare_clone, new_repo
from watcher.core.store import Store
from watcher.notify.delivery import WebApiSink, deliver_outbox
from watcher.notify.settings import SlackSettings
from watcher.ops.status import collect_status, render_status
from watcher.repos.discover import discovered, discovery_error, first_code_owner, unowned
from watcher.repos.sync import sync_repos

DATE = "2026-11-01T12:00:00Z"


def test_the_organisations_repositories_with_the_topic_are_read(tmp_path: Path):
    hosted = tmp_path / "hosted"
    for name in ("books", "old"):
        bare_clone(team_repo(tmp_path / "src" / name, name), hosted / f"{name}.git")
    search = new_repo(
        tmp_path / "src" / "search", {"pyproject.toml": PYPROJECT.format(name="search", version="1.27.0")}
    )
    bare_clone(search, hosted / "search.git")
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
        gh.add_commit("acme/search", "pyproject.toml", PYPROJECT.format(name="search", version="1.27.0"), DATE)
        gh.add_commit("acme/old", ".mcp-watcher.yaml", TEAM_FILE.format(name="old"), DATE)
        gh.add_commit("acme/gateway", ".mcp-watcher.yaml", TEAM_FILE.format(name="gateway"), DATE)
        discover = {
            "github": {"org": "acme", "team": "books", "topic": "mcp", "api_url": gh.api_url, "token_env": "ACME_TOKEN"}
        }
        loaded = central_config(tmp_path, [], discover=discover, http_client={"retries": 0})
        store = Store(tmp_path / "state" / "watcher.db")
        env = {"ACME_TOKEN": "t0ken"}

        result = sync_repos(loaded, store, environ=env)
        assert [s.name for s in result.config.servers] == ["books"]
        assert result.config.server("books").source.git == host.repo_url("books.git")  # type: ignore[union-attr]
        # search has the topic but no team file: it is read all the same, and gets a proposal (not a server yet)
        [without] = [s for s in result.repos if s.git == host.repo_url("search.git")]
        assert without.has_file is False and without.proposal is not None
        first = [(r.method, r.path, r.status) for r in gh.requests]
        assert first == [
            ("GET", "/orgs/acme/repos", 200),
            ("GET", "/repos/acme/books/contents/", 200),  # one listing says what is there: no request 404s
            ("GET", "/repos/acme/search/contents/", 200),
        ]
        assert all(r.headers.get("authorization") == "Bearer t0ken" for r in gh.requests)

        # The scheduled refresh asks again conditionally: nothing changed, every answer a 304.
        gh.requests.clear()
        sync_repos(loaded, store, environ=env)
        assert [r.status for r in gh.requests] == [304, 304, 304]

        # GitHub failing is a reported result; the repositories found before stay in use.
        gh.fail_next("/orgs/acme/repos", status=503)
        failed = sync_repos(loaded, store, environ=env)
        assert [s.name for s in failed.config.servers] == ["books"]
        assert "HTTP 503" in (discovery_error(store) or "")
        assert "discovery: GitHub organisation acme (topic mcp) could not be read: " in render_status(
            collect_status(loaded, store)
        )


def test_owners_come_from_codeowners_and_github_teams_and_the_rest_is_told_to_the_operators(
    tmp_path: Path, slack: FakeSlack
):
    hosted = tmp_path / "hosted"
    for name in ("books", "gateway", "stray"):
        bare_clone(team_repo(tmp_path / "src" / name, name), hosted / f"{name}.git")
    sdk_only = new_repo(
        tmp_path / "src" / "shelf", {"package.json": '{"dependencies": {"@modelcontextprotocol/sdk": "^1.20"}}'}
    )
    bare_clone(sdk_only, hosted / "shelf.git")
    with FakeGitHost(root=hosted) as host, FakeGitHub() as gh:
        gh.set_org_repos(
            "acme",
            [
                {"name": n, "clone_url": host.repo_url(f"{n}.git")}
                for n in ("books", "gateway", "stray", "shelf", "docs-site")
            ],
        )
        for name in ("books", "gateway", "stray"):
            gh.add_commit(f"acme/{name}", ".mcp-watcher.yaml", TEAM_FILE.format(name=name), DATE)
        # books: its CODEOWNERS' first owner is a GitHub team the table maps
        gh.add_commit("acme/books", ".github/CODEOWNERS", "# owners\n*       @acme/book-devs @alice\n", DATE)
        # gateway: no CODEOWNERS; one of its GitHub teams is in the table
        gh.set_repo_teams("acme/gateway", ["everyone", "infra-team"])
        # stray: CODEOWNERS names someone the table does not know, and its teams are not in it either
        gh.add_commit("acme/stray", "CODEOWNERS", "* @bob\n", DATE)
        gh.set_repo_teams("acme/stray", ["everyone"])
        # shelf: no team file, but its manifest names an MCP SDK; its owner by CODEOWNERS in docs/
        gh.add_commit("acme/shelf", "package.json", '{"dependencies": {"@modelcontextprotocol/sdk": "^1.20"}}', DATE)
        gh.add_commit("acme/shelf", "docs/CODEOWNERS", "* @acme/Book-Devs\n", DATE)
        # docs-site: neither the file nor an MCP SDK: not a server repository
        gh.add_commit("acme/docs-site", "package.json", '{"dependencies": {"vite": "^6"}}', DATE)
        discover = {
            "github": {
                "org": "acme",
                "api_url": gh.api_url,
                "owners": {"book-devs": "books", "infra-team": "infra"},
            }
        }
        loaded = central_config(
            tmp_path,
            [],
            discover=discover,
            http_client={"retries": 0},
            slack={"api_url": slack.api_url, "retries": 1, "operators_channel": "#ops"},
        )
        store = Store(tmp_path / "state" / "watcher.db")
        result = sync_repos(loaded, store, environ={})
        queued = len(store.outbox())
        sync_repos(loaded, store, environ={})
        assert len(store.outbox()) == queued  # told once: a second pass queues nothing more

    owners = {r.git.rsplit("/", 1)[-1]: r.team for r in discovered(store)}
    assert owners == {"books.git": "books", "gateway.git": "infra", "shelf.git": "books"}
    assert sorted(s.name for s in result.config.servers) == ["books", "gateway"]
    assert result.config.server("gateway").team == "infra"
    [stray] = unowned(store)
    assert stray.repository == "acme/stray"
    assert "CODEOWNERS's first owner @bob is not in discover.github.owners" in stray.why
    assert "none of its GitHub teams (everyone) is in discover.github.owners" in stray.why

    deliver_outbox(store, WebApiSink(slack.token, SlackSettings(api_url=slack.api_url, retries=1), store))
    told = [m["text"] for m in slack.messages if m["channel"] == slack.channel_id("#ops")]
    assert len(told) == 1 and "acme/stray" in told[0] and "discover.github.owners" in told[0]
    # The repository without a file got its proposal, in its owner's channel.
    proposals = [m["text"] for m in slack.messages if m["channel"] == slack.channel_id("#books-mcp")]
    assert len(proposals) == 1 and "has no .mcp-watcher.yaml" in proposals[0] and "shelf.git" in proposals[0]
    status = render_status(collect_status(loaded, store))
    assert "unowned: acme/stray: " in status
    assert "no team file: " in status and "typescript, SDK @modelcontextprotocol/sdk" in status


def test_the_first_code_owner_is_the_first_rules_first_owner():
    assert first_code_owner("# comment\n\n/docs/ @acme/writers\n* @acme/devs\n") == "@acme/writers"
    assert first_code_owner("*.py   @alice   @bob # trailing\n") == "@alice"
    assert first_code_owner("# nothing but comments\n") is None
