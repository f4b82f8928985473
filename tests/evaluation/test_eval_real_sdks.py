"""The end-to-end path with real SDK versions: the example library server built by the suite runner's
environments under two published `mcp` versions, started over HTTP, evaluated with the loopback provider."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.model_provider import FakeProvider
from tests.suites.helpers import LIBRARY, library_server, write_config
from watcher.evaluation.run import run_evaluation

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def test_the_example_server_on_two_published_sdk_versions(tmp_path: Path, sdk_envs: Path):
    with FakeProvider() as fake:
        evaluation = {
            "tasks": "eval-tasks.yaml",
            "model": "fake-model-1",
            "api_key_env": "EVAL_TEST_API_KEY",
            "api_url": fake.base,
            "trials": 1,
        }
        loaded = write_config(tmp_path, [library_server(evaluation=evaluation)], sdk_envs)
        report = run_evaluation(loaded, "library", "2.2.0", environ={"EVAL_TEST_API_KEY": "sk-test-real"})
    assert report["error"] is None, report["error"]
    assert report["tasks_file"] == str(LIBRARY / "eval-tasks.yaml")
    assert (report["baseline_version"], report["candidate_version"]) == ("2.3.0", "2.2.0")
    assert report["tools"]["baseline"] == report["tools"]["candidate"] == ["find_book", "find_book_by_author"]
    assert report["verdict"] == "no_regression", report["regressions"]
    assert all(t["baseline"]["success_rate"] == 1.0 for t in report["tasks"]), report["tasks"]
