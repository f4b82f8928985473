"""A repository without a team file: one onboarding message with what detection found and a ready-to-commit
`.mcp-watcher.yaml`, shown on the status page until a file appears. Committed unchanged, the proposal passes the
team-file loader; the slow test runs its server in a room and gets a passing first run and its message."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.fakes.slack_server import FakeSlack
from tests.repos.helpers import central_config, change
from tests.repos.test_resolve import seen
from tests.suites.helpers import LIBRARY, new_repo
from watcher.core.store import Store
from watcher.notify.delivery import WebApiSink, deliver_outbox
from watcher.notify.settings import SlackSettings
from watcher.repos.proposal import propose
from watcher.repos.sync import effective_config, sync_repos
from watcher.repos.teamfile import parse_team_file


def library_repo(folder: Path) -> Path:
    """The Python example as a team's repository at its root (its `mcp>=2` and its console script), no team file."""
    repo = new_repo(folder, copy_from=LIBRARY)
    for extra in ("baseline-snapshot", "conformance-baseline.yml", "eval-tasks.yaml"):
        path = repo / extra
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    change(repo, {}, "only the server")
    return repo


@pytest.mark.parametrize(
    ("files", "language", "start", "prepare"),
    [
        ({"pyproject.toml": '[project]\nname = "x"\ndependencies = ["mcp==1.27.0"]\n', "server.py": ""},
         "python", ["python", "server.py"], None),
        ({"package.json": '{"main": "./dist/main.js", "dependencies": {"@modelcontextprotocol/sdk": "1.20.0"}}'},
         "typescript", ["node", "dist/main.js"], None),
        ({"cmd/go.mod": "module m\nrequire github.com/modelcontextprotocol/go-sdk v1.6.0\n"},
         "go", ["./server"], [["go", "get", "{package}@{version}"], ["go", "build", "-o", "server", "."]]),
    ],
)  # fmt: skip
def test_the_proposal_says_what_was_found_and_loads_as_it_is(
    tmp_path: Path, files: dict[str, str], language: str, start: list[str], prepare: list[list[str]] | None
):
    proposal = propose("https://git.example/acme/books-mcp.git", list(files), files.get, taken={"books-mcp"})
    assert proposal.name == "books-mcp-2"  # a name already taken is not proposed
    assert proposal.start == start and proposal.detection is not None
    assert proposal.detection["language"] == language
    assert (proposal.prepare or None) == prepare
    sdks = [
        {"name": "python", "registry": "pypi", "package": "mcp"},
        {"name": "typescript", "registry": "npm", "package": "@modelcontextprotocol/sdk"},
        {"name": "go", "registry": "goproxy", "package": "github.com/modelcontextprotocol/go-sdk"},
    ]
    parsed = parse_team_file(
        proposal.text,
        filename="books-mcp@abc:.mcp-watcher.yaml",
        git="https://git.example/acme/books-mcp.git",
        commit="abc",
        team="books",
        config=central_config(tmp_path, [], sdks=sdks).config,
        files=list(files),
        read=files.get,
    )
    [server] = parsed.servers
    assert server.name == "books-mcp-2" and server.start == start and server.transport == "stdio"
    assert server.source is not None and server.source.subdir == proposal.folder


def test_a_repository_without_a_file_is_told_once_and_shown_until_a_file_appears(tmp_path: Path, slack: FakeSlack):
    repo = library_repo(tmp_path / "books-mcp")
    loaded = central_config(tmp_path, [{"git": str(repo), "team": "books"}], slack={"api_url": slack.api_url})
    store = Store(tmp_path / "state" / "watcher.db")
    seen(store, "2.0.0", "2.3.0")
    first = sync_repos(loaded, store)
    sync_repos(loaded, store)  # the next pass tells nothing again
    assert first.config.servers == [] and first.repos[0].proposal is not None
    proposal = first.repos[0].proposal
    assert proposal.start == ["library-server"]  # its console script
    deliver_outbox(store, WebApiSink(slack.token, SlackSettings(api_url=slack.api_url, retries=1), store))
    [message] = slack.messages
    assert "but it has no .mcp-watcher.yaml: none of its servers is watched yet" in message["text"]
    assert (
        "Found: python, SDK mcp 2 (from &gt;=2) in pyproject.toml; likely start: library-server" in message["text"]
    )  # escaped, as all our text
    assert proposal.text in message["text"] and "```" in str(message["blocks"])
    page = _page(loaded, store)
    assert f'data-repository="{repo}"' in page and "start: [library-server]" in page

    change(repo, {".mcp-watcher.yaml": proposal.text}, "the proposal, as it was")
    second = sync_repos(loaded, store)
    [server] = second.config.servers
    assert (server.name, server.language, server.sdk, server.baseline_sdk_version) == (
        "books-mcp",
        "python",
        "python",
        "2.3.0",
    )
    assert second.repos[0].proposal is None and f'data-repository="{repo}"' not in _page(loaded, store)


def _page(loaded, store: Store) -> str:
    from watcher.ops.health import Readiness, build_app
    from watcher.web.access import Access
    from watcher.web.app import web_parts
    from watcher.web.context import WebContext

    ctx = WebContext(effective_config(loaded, store), store)
    app = build_app(
        Readiness(store, 30, datetime(2026, 11, 1, tzinfo=UTC), lambda: True),
        *web_parts(ctx, Access(None, protect_metrics=False)),
    )
    return TestClient(app).get("/").text


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_the_committed_proposal_starts_in_a_room_and_its_first_run_passes(tmp_path: Path, slack: FakeSlack):
    from watcher.boundary import sandbox
    from watcher.repos.onboarding import send_due_onboarding, start_onboarding
    from watcher.suites.worker import process_queue

    repo = library_repo(tmp_path / "books-mcp")
    loaded = central_config(tmp_path, [{"git": str(repo), "team": "books"}], slack={"api_url": slack.api_url})
    store = Store(tmp_path / "state" / "watcher.db")
    seen(store, "2.0.0", "2.3.0")
    proposal = sync_repos(loaded, store).repos[0].proposal
    assert proposal is not None
    change(repo, {".mcp-watcher.yaml": proposal.text}, "the proposal, as it was")
    result = sync_repos(loaded, store)
    assert start_onboarding(store, result.new) == ["books-mcp@2.3.0"]
    [outcome] = process_queue(effective_config(loaded, store), store)
    report = outcome["report"]
    assert report["verdict"] == "pass", report["reasons"]
    assert report["start"]["ok"] and report["source"]["commit"] == result.repos[0].commit
    if sandbox.choose("auto").mode == "bubblewrap":
        assert report["install"]["sandboxed"]  # built and started in a room
    assert len(send_due_onboarding(effective_config(loaded, store), store, sync_repos(loaded, store).repos)) == 1
    deliver_outbox(store, WebApiSink(slack.token, SlackSettings(api_url=slack.api_url, retries=1), store))
    onboarding = slack.messages[-1]["text"]
    assert onboarding.startswith(f"mcp-watcher now watches {repo}")
    said = "SDK mcp 2.3.0 (detected in pyproject.toml; &gt;=2 resolved to 2.3.0 (newest stable satisfying &gt;=2))"
    assert said in onboarding  # escaped, as all our text
    assert "first run: pass" in onboarding
