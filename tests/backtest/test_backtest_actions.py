"""A backtest of a server whose executor is the team's GitHub Actions: each version is dispatched there like
any run (the fake GitHub, real HTTP on loopback), its report read from the artifact and judged."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tests.backtest.helpers import fastmcp_server, write_config, write_history
from tests.fakes.github_actions import RunPlan
from tests.fakes.github_server import FakeGitHub
from tests.fakes.registry_server import serve_registry
from tests.suites.test_github_actions import REPO, TOKEN, WORKFLOW, ci_report
from watcher.backtest.replay import run_backtest
from watcher.core.store import Store


@pytest.fixture
def gh(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("BOOKS_GH_TOKEN", TOKEN)
    with FakeGitHub() as fake:
        fake.actions.token = TOKEN
        yield fake


def test_each_version_is_dispatched_to_the_teams_workflow(tmp_path: Path, gh: FakeGitHub):
    report = ci_report("fail", server="notes-1x", sdk_version="2.0.0a1")
    gh.actions.add_workflow(REPO, WORKFLOW, RunPlan(report=report))
    executor = {
        "kind": "github-actions",
        "repo": REPO,
        "workflow": WORKFLOW,
        "token_env": "BOOKS_GH_TOKEN",
        "api_url": gh.api_url,
        "poll_seconds": 0.01,
        "find_seconds": 5,
        "timeout_minutes": 1,
    }
    write_history(tmp_path / "registry", ["2.0.0a1"])
    with serve_registry(tmp_path / "registry") as registry:
        loaded = write_config(tmp_path, registry.url("pypi/simple"), [fastmcp_server(executor=executor)], tmp_path)
        store = Store(loaded.resolve(loaded.config.state))
        answer = run_backtest(loaded, store, "notes-1x", date(2026, 6, 1), date(2026, 6, 30))
    [dispatch] = gh.actions.dispatches
    assert dispatch["sdk_version"] == "2.0.0a1" and dispatch["server"] == "notes-1x"
    assert store.dispatched(dispatch["run_key"])["state"] == "completed"
    [version] = answer["versions"]
    assert version["verdict"] == "fail" and version["problems"][0]["kind"] == "contract"
    [finding] = answer["findings"]
    assert (finding["status"], finding["first_version"], finding["lead_days"]) == ("open", "2.0.0a1", None)
    assert store.runs() == []  # the live run queue is left alone
