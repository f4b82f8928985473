"""The first time a team repository is read: its servers run once, then one message to its team."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.slack_server import FakeSlack
from tests.repos.helpers import central_config, change, team_repo
from watcher.core.store import Store
from watcher.notify.delivery import WebApiSink, deliver_outbox
from watcher.notify.settings import SlackSettings
from watcher.repos.onboarding import send_due_onboarding, start_onboarding
from watcher.repos.sync import LoadedConfig, sync_repos
from watcher.suites.worker import process_queue

# A declared build that fails: a real run with a real (error) verdict, without installing an SDK.
TEAM_FILE = """\
servers:
  - name: books
    path: server
    language: other
    prepare: [["false"]]
    start: [./server]
"""


def test_one_onboarding_message_with_what_was_found_and_the_first_verdict(tmp_path: Path, slack: FakeSlack):
    repo = team_repo(tmp_path / "books-repo", "books", version="1.26.0", team_file=TEAM_FILE)
    central = central_config(tmp_path, [{"git": str(repo), "team": "books"}])
    store = Store(tmp_path / "state" / "watcher.db")
    result = sync_repos(central, store)
    loaded = LoadedConfig(config=result.config, path=central.path, base_dir=central.base_dir)
    assert start_onboarding(store, result.new) == ["books@1.26.0"]
    assert send_due_onboarding(loaded, store, result.repos) == []  # the first run is not done yet

    outcomes = process_queue(loaded, store)
    assert [(o["server"], o["sdk_version"], o["verdict"], o["notice"]) for o in outcomes] == [
        ("books", "1.26.0", "error", None)  # no separate result notice: the onboarding message has it
    ]
    states = sync_repos(central, store).repos
    assert len(send_due_onboarding(loaded, store, states)) == 1
    change(repo, {"server/server.py": "print('changed')\n"})
    again = sync_repos(central, store)
    assert again.new == [] and send_due_onboarding(loaded, store, again.repos) == []

    deliver_outbox(store, WebApiSink(slack.token, SlackSettings(api_url=slack.api_url, retries=1), store))
    assert len(slack.messages) == 1
    text = slack.messages[0]["text"]
    assert f"mcp-watcher now watches {repo} (HEAD @ " in text
    assert "books: other (python), SDK mcp 1.26.0 (detected in server/pyproject.toml" in text
    assert "requirement sets 2026-07-28, 2025-11-25" in text
    # The failed build stopped the run before its snapshot: no claim of a baseline.
    assert "no contract baseline yet (the first run stopped before it); first run: error — " in text
    assert "edit .mcp-watcher.yaml in the repository" in text
