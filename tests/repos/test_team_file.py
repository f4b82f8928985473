"""The team's `.mcp-watcher.yaml` in real git repositories: added, changed, broken, removed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fakes.slack_server import FakeSlack
from tests.repos.helpers import TEAM_FILE, central_config, change, team_repo
from tests.suites.helpers import head
from watcher.config import parse_config
from watcher.core.errors import ConfigError
from watcher.core.store import Store
from watcher.notify.delivery import WebApiSink, deliver_outbox
from watcher.notify.settings import SlackSettings
from watcher.repos.sync import effective_config, repo_states, sync_repos
from watcher.repos.teamfile import github_repository


def store_of(folder: Path) -> Store:
    return Store(folder / "state" / "watcher.db")


def test_servers_come_from_the_team_file_at_the_commit_read(tmp_path: Path):
    repo = team_repo(tmp_path / "books-repo", "books")
    loaded = central_config(tmp_path, [{"git": str(repo), "team": "books"}])
    store = store_of(tmp_path)
    result = sync_repos(loaded, store)
    server = result.config.server("books")
    assert server.team == "books"
    assert server.source is not None
    assert (server.source.ref, server.source.subdir) == (head(repo), "server")
    assert (server.language, server.sdk, server.sdk_package, server.baseline_sdk_version) == (
        "python",
        "python",
        "mcp",
        "1.26.0",
    )
    assert server.requirements == ["2026-07-28"]
    assert [s.git for s in result.new] == [str(repo)]

    # Changed: the next read follows the branch to the new commit, with the new settings.
    commit = change(repo, {".mcp-watcher.yaml": TEAM_FILE.format(name="books").replace("2026-07-28", "2025-11-25")})
    second = sync_repos(loaded, store)
    assert second.new == []  # seen before: not new again
    again = second.config.server("books")
    assert again.source is not None and again.source.ref == commit
    assert again.requirements == ["2025-11-25"]
    # A restart without reading the repositories runs with the last good servers.
    assert effective_config(loaded, store).config.server("books").requirements == ["2025-11-25"]

    # Removed: the repository no longer declares servers.
    change(repo, {".mcp-watcher.yaml": None})
    gone = sync_repos(loaded, store)
    assert [s.name for s in gone.config.servers] == []
    assert gone.repos[0].has_file is False and gone.repos[0].error is None


def test_a_broken_team_file_is_reported_once_and_the_last_good_config_stays(tmp_path: Path, slack: FakeSlack):
    books = team_repo(tmp_path / "books-repo", "books")
    infra = team_repo(tmp_path / "infra-repo", "gateway")
    loaded = central_config(tmp_path, [{"git": str(books), "team": "books"}, {"git": str(infra), "team": "infra"}])
    store = store_of(tmp_path)
    good = head(books)
    sync_repos(loaded, store)
    broken = change(
        books,
        {".mcp-watcher.yaml": TEAM_FILE.format(name="books") + "    transprot: stdio\n"},
        "typo",
    )
    change(infra, {".mcp-watcher.yaml": TEAM_FILE.format(name="gateway").replace("2026-07-28", "2025-11-25")})
    result = sync_repos(loaded, store)
    state = next(s for s in result.repos if s.team == "books")
    assert state.error is not None
    assert f"@{broken[:12]}:.mcp-watcher.yaml:6: servers.0.transprot: unknown key" in state.error
    # The books repository keeps its last good servers; the infra team's change is read as usual.
    books_server = result.config.server("books")
    assert books_server.source is not None and books_server.source.ref == good
    assert result.config.server("gateway").requirements == ["2025-11-25"]

    sync_repos(loaded, store)  # the same error again: no second notice
    sink = WebApiSink(slack.token, SlackSettings(api_url=slack.api_url, retries=1, timeout_seconds=5), store)
    deliver_outbox(store, sink)
    sent = [m for m in slack.messages if m["channel"] == slack.channel_id("#books-mcp")]
    assert len(sent) == 1
    assert "transprot" in sent[0]["text"] and f"servers from {good[:12]} stay in use" in sent[0]["text"]
    assert [m for m in slack.messages if m["channel"] == slack.channel_id("#infra-mcp")] == []
    assert repo_states(loaded.config, store)[1].error is None

    # The status page says it too, with the file, line and key.
    from starlette.testclient import TestClient

    from watcher.ops.health import Readiness, build_app
    from watcher.web.access import Access
    from watcher.web.app import web_parts
    from watcher.web.context import WebContext

    ctx = WebContext(effective_config(loaded, store), store)
    app = build_app(
        Readiness(store, 30, datetime(2026, 11, 1, tzinfo=UTC), lambda: True),
        *web_parts(ctx, Access(None, protect_metrics=False)),
    )
    page = TestClient(app).get("/").text
    assert f"Team books: {books}@{broken[:12]}:.mcp-watcher.yaml:6: servers.0.transprot: unknown key" in page
    assert f"its servers from {good[:12]} stay in use until it is fixed" in page


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("    team: infra\n", "servers.0.team: not in a team file"),
        ("    env_from: [SLACK_BOT_TOKEN]\n", "servers.0.env_from: not in a team file"),
        ("    sdk: swift\n", "servers.0.sdk: unknown SDK 'swift'"),
        ("    accept: /etc/passwd\n", "servers.0.accept: expected a path inside the repository"),
        ("    expected_failures: ../../state/x.yaml\n", "servers.0.expected_failures: expected a path inside"),
        (
            "    executor: {kind: github-actions, repo: a/b, workflow: w.yml, token_env: SLACK_BOT_TOKEN}\n",
            "servers.0.executor.token_env: not in a team file: the dispatching token is the platform's",
        ),
        (
            "    executor: {kind: github-actions, repo: other-team/their-repo, workflow: w.yml}\n",
            "servers.0.executor.repo: a team file may dispatch only to its own repository",
        ),
        (
            "    evaluation: {tasks: t.yaml, model: m, api_url: 'http://evil.example'}\n",
            "servers.0.evaluation.api_url: not in a team file",
        ),
    ],
)
def test_keys_the_platform_owns_are_refused_with_their_line(tmp_path: Path, extra: str, expected: str):
    repo = team_repo(tmp_path / "repo", "books", team_file=TEAM_FILE.format(name="books") + extra)
    result = sync_repos(central_config(tmp_path, [{"git": str(repo), "team": "books"}]), store_of(tmp_path))
    assert result.repos[0].error is not None
    assert ".mcp-watcher.yaml:6: " + expected in result.repos[0].error
    assert result.config.servers == []


def test_a_server_defined_centrally_and_in_a_team_file_names_both(tmp_path: Path):
    repo = team_repo(tmp_path / "repo", "books")
    central = {
        "name": "books",
        "team": "books",
        "sdk": "python",
        "language": "python",
        "path": str(tmp_path),
        "start": ["python", "server.py"],
        "baseline_sdk_version": "1.26.0",
    }
    loaded = central_config(tmp_path, [{"git": str(repo), "team": "books"}], servers=[central])
    result = sync_repos(loaded, store_of(tmp_path))
    assert result.repos[0].error is None  # the file is fine: only its one server is refused
    refusal = result.repos[0].refused["books"]
    assert ".mcp-watcher.yaml:2: servers: server 'books' is also defined in" in refusal
    assert f"{tmp_path / 'watcher.yaml'}: servers[0]" in refusal
    assert [s.name for s in result.config.servers] == ["books"]  # the central one, unchanged
    assert result.config.server("books").path == str(tmp_path)


def test_an_unreachable_repository_is_its_error_only(tmp_path: Path):
    good = team_repo(tmp_path / "good", "books")
    loaded = central_config(
        tmp_path, [{"git": str(tmp_path / "missing"), "team": "infra"}, {"git": str(good), "team": "books"}]
    )
    result = sync_repos(loaded, store_of(tmp_path))
    assert "git fetch of" in (result.repos[0].error or "")
    assert [s.name for s in result.config.servers] == ["books"]


def test_repos_must_name_a_configured_team():
    text = "teams: [{name: books, slack_channel: '#b'}]\nrepos:\n  - git: https://example.org/r.git\n    team: nobody\n"
    with pytest.raises(ConfigError, match=r"<config>:4: repos.0.team: unknown team 'nobody'"):
        parse_config(text)


def test_a_team_files_dispatch_target_is_read_from_its_own_github_address():
    assert github_repository("https://github.com/acme/books.git") == "acme/books"
    assert github_repository("git@github.com:acme/books.git") == "acme/books"
    assert github_repository("https://github.com/acme/books") == "acme/books"
    assert github_repository("https://gitlab.example/acme/books.git") is None
    assert github_repository("/srv/git/books") is None


def test_an_unreadable_stored_state_leaves_that_repository_out_and_reported_and_the_pass_goes_on(tmp_path: Path):
    books = team_repo(tmp_path / "books-repo", "books")
    infra = team_repo(tmp_path / "infra-repo", "gateway")
    loaded = central_config(tmp_path, [{"git": str(books), "team": "books"}, {"git": str(infra), "team": "infra"}])
    store = store_of(tmp_path)
    sync_repos(loaded, store)
    stored = store.get_kv(f"repo:{books}")
    assert isinstance(stored, dict)
    stored["servers"][0]["name"] = 5  # a stored field of another type (a downgrade, a hand edit)
    store.set_kv(f"repo:{books}", stored)
    change(infra, {".mcp-watcher.yaml": TEAM_FILE.format(name="gateway").replace("2026-07-28", "2025-11-25")})

    result = sync_repos(loaded, store)
    state = next(s for s in result.repos if s.team == "books")
    assert state.error is not None and "servers.0.name: Input should be a valid string" in state.error
    assert [s.name for s in result.config.servers] == ["gateway"]  # books left out, infra read as usual
    assert result.config.server("gateway").requirements == ["2025-11-25"]
    assert store.get_kv(f"repo:{books}") == stored  # kept as it was stored, not saved over
    shown = next(s for s in repo_states(loaded.config, store) if s.team == "books")
    assert shown.error == state.error  # what status and the pages show
