"""Release tags are outside strings: hostile GitHub tags served by the loopback GitHub fake are recorded and
shown (escaped, no ping), never substituted into a command, never queued, never run.

The server under test is `language: other` with a `prepare` in the common `["sh", "-c", "… {version} …"]`
form, the shape with which such tags once ran on the host.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.fakes.slack_server import FakeSlack
from watcher.cli import main
from watcher.config import load_config
from watcher.core.store import Store
from watcher.evaluation.run import run_evaluation
from watcher.suites.executors import execute
from watcher.suites.runner import run_check

HOSTILE = ["v1.1.0-beta.1;touch${IFS}pwned-semicolon", "$(touch pwned-subst)-rc.1", "v1.2.0-beta <!channel>"]
SAFE_BETA = "v1.3.0-beta.1"


def _config(tmp_path: Path, gh: FakeGitHub, slack: FakeSlack) -> Path:
    workdir = tmp_path / "work"
    workdir.mkdir()
    (tmp_path / "state").mkdir()  # the watcher refuses a `state:` whose folder is missing
    (workdir / "app.sh").write_text("echo hi\n", encoding="utf-8")
    marker_prepare = ["sh", "-c", "echo {version} > prepared.txt"]
    path = tmp_path / "watcher.yaml"
    path.write_text(
        f"""
state: {tmp_path / "state" / "watcher.db"}
sdks:
  - {{name: kotlin, registry: github, package: acme/kotlin-sdk, url: "{gh.api_url}"}}
teams:
  - {{name: books, slack_channel: "#books-mcp", sdks: [kotlin]}}
servers:
  - name: books-kt
    team: books
    sdk: kotlin
    language: other
    path: {workdir}
    transport: stdio
    prepare: [{marker_prepare!r}]
    start: ["sh", "app.sh"]
    baseline_sdk_version: "1.0.0"
suites:
  runs_dir: {tmp_path / "runs"}
  envs_dir: {tmp_path / "envs"}
  on_baseline: false
slack: {{api_url: "{slack.api_url}", retries: 0}}
http_client: {{timeout_seconds: 5, retries: 0, backoff_seconds: 0}}
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def slack(monkeypatch: pytest.MonkeyPatch):
    with FakeSlack(token="xoxb-test-token", channels=["#books-mcp"]) as fake:
        monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test-token")
        yield fake


def test_hostile_tags_are_recorded_and_shown_escaped_never_queued_or_run(
    tmp_path: Path, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)  # where a `touch` in a tag would land
    with FakeGitHub() as gh:
        gh.set_releases("acme/kotlin-sdk", [FakeGitHub.release("v1.0.0", "2026-10-01T10:00:00Z")])
        config = _config(tmp_path, gh, slack)
        assert main(["--config", str(config), "poll"]) == 0  # the baseline
        gh.set_releases(
            "acme/kotlin-sdk",
            [FakeGitHub.release(tag, "2026-11-20T10:00:00Z", prerelease=True) for tag in [*HOSTILE, SAFE_BETA]]
            + [FakeGitHub.release("v1.0.0", "2026-10-01T10:00:00Z")],
        )
        assert main(["--config", str(config), "poll"]) == 0

    store = Store(tmp_path / "state" / "watcher.db")
    recorded = store.known_versions("kotlin", "acme/kotlin-sdk")
    assert set(HOSTILE) | {SAFE_BETA} <= recorded  # recorded, and so shown by status and the page
    # Only the well-formed beta is queued.
    assert [run["sdk_version"] for run in store.runs()] == [SAFE_BETA]

    posted = {message["text"]: message for message in slack.messages}
    assert len(posted) == 4
    for message in slack.messages:
        everything = message["text"] + repr(message.get("blocks"))
        assert "<!channel>" not in everything and "<!" not in everything
    hostile_alerts = [m for m in slack.messages if "unparseable" in m["text"]]
    assert len(hostile_alerts) == 3
    assert all("No suite run" in m["text"] and "never run" in m["text"] for m in hostile_alerts)
    assert any("&lt;!channel&gt;" in m["text"] for m in hostile_alerts)

    # Even asked for by hand (`check --sdk-version`), a hostile version never reaches `prepare`.
    loaded = load_config(config)
    for tag in HOSTILE:
        report = run_check(loaded, "books-kt", tag)
        assert report["verdict"] == "error" and report["install"] is None
        assert "never run" in report["reasons"][0]["reason"]
        evaluated = run_evaluation(loaded, "books-kt", tag, run_dir=tmp_path / "eval")
        assert evaluated["verdict"] == "error" and "never run" in evaluated["error"]
    # And a run of a hostile version queued by an older watcher is refused by the executor, not dispatched or run.
    queued = {"id": 0, "server": "books-kt", "sdk": "kotlin", "sdk_version": HOSTILE[0], "trigger": "old"}
    refused = execute(loaded, store, queued, None)  # type: ignore[arg-type]
    assert refused["verdict"] == "error" and "never run" in refused["reasons"][0]["reason"]
    assert not list(tmp_path.rglob("pwned-*")), "a tag ran a command"
    assert not list(tmp_path.rglob("prepared.txt"))  # no prepare ran at all
    assert not any(Path(os.getcwd()).glob("pwned-*"))
