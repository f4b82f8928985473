"""The evaluation in the service (after a suite run whose diff affects models) and on demand (`mcp-watcher eval`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.evaluation.helpers import API_KEY, use_variants, write_config
from tests.fakes.model_provider import FakeProvider
from watcher import pipeline as worker
from watcher.cli import main
from watcher.config import LoadedConfig
from watcher.core.store import Store
from watcher.suites.executors import local as local_executor

pytestmark = [pytest.mark.timeout(180)]
MODEL_CHANGE = {
    "list": "tools",
    "name": "count_notes",
    "kind": "tool-description-changed",
    "breaksClients": False,
    "affectsModels": True,
}


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


def suite_report(loaded: LoadedConfig, changes: list[dict[str, Any]]):
    """run_check's stand-in: the suites themselves are tested in tests/suites; here only their diff matters."""

    def run_check(loaded_: LoadedConfig, server: str, version: str, cancel: Any = None) -> dict[str, Any]:
        run_dir = loaded.resolve(loaded.config.suites.runs_dir) / server / "run-1"
        run_dir.mkdir(parents=True, exist_ok=True)
        return {
            "server": server,
            "team": "books",
            "sdk": "python",
            "sdk_package": "mcp",
            "sdk_version": version,
            "baseline_sdk_version": "2.3.0",
            "run_id": "run-1",
            "run_dir": str(run_dir),
            "verdict": "pass",
            "reasons": [],
            "conformance": [],
            "contract": {"changes": changes},
            "seconds": 1.0,
        }

    return run_check


def test_a_beta_whose_diff_affects_models_gets_one_threaded_evaluation_reply(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("EVAL_TEST_API_KEY", API_KEY)
    loaded = write_config(tmp_path, fake.base, trials=2)
    use_variants(monkeypatch, "baseline", "candidate-desc")
    monkeypatch.setattr(local_executor, "run_check", suite_report(loaded, [MODEL_CHANGE]))
    store = Store(loaded.resolve(loaded.config.state))
    worker.queue_for_release(loaded, store, "python", "2.4.0b1", prerelease=True)
    outcomes = worker.process_queue(loaded, store)
    assert outcomes[0]["evaluation"] == "regression"
    rows = {row["key"]: row for row in store.outbox()}
    assert sorted(rows) == ["eval:notes:2.4.0b1:books", "run:notes:2.4.0b1:books"]
    reply = rows["eval:notes:2.4.0b1:books"]
    assert reply["thread_of"] == "release:python:2.4.0b1:books"
    assert reply["kind"] == "evaluation_result" and reply["channel"] == "#books-mcp"
    assert reply["text"].startswith("REGRESSION: notes: models do worse on 2.4.0b1 against 2.3.0")
    assert "count: success 2/2 → 0/2" in reply["text"]
    assert "Models: 1 change(s) affect models: model evaluation regression" in rows["run:notes:2.4.0b1:books"]["text"]
    stored = store.runs(status="done")[0]["report"]
    assert stored["evaluation"]["regressed_tasks"] == ["count"]
    assert json.loads(Path(stored["evaluation"]["report"]).read_text())["verdict"] == "regression"


def test_without_an_evaluation_set_the_suite_reply_says_so_and_nothing_else_runs(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
):
    loaded = write_config(tmp_path, fake.base, declared=False)
    monkeypatch.setattr(local_executor, "run_check", suite_report(loaded, [MODEL_CHANGE]))
    store = Store(loaded.resolve(loaded.config.state))
    worker.queue_for_release(loaded, store, "python", "2.4.0b1", prerelease=True)
    worker.process_queue(loaded, store)
    rows = store.outbox()
    assert [r["key"] for r in rows] == ["run:notes:2.4.0b1:books"]
    assert "no evaluation set declared: 1 change(s) affect models" in rows[0]["text"]
    assert fake.requests == []


def test_a_diff_that_affects_no_model_runs_no_evaluation(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
):
    loaded = write_config(tmp_path, fake.base)
    breaking_only = {**MODEL_CHANGE, "breaksClients": True, "affectsModels": False}
    monkeypatch.setattr(local_executor, "run_check", suite_report(loaded, [breaking_only]))
    store = Store(loaded.resolve(loaded.config.state))
    worker.queue_for_release(loaded, store, "python", "2.4.0b1", prerelease=True)
    worker.process_queue(loaded, store)
    assert [r["key"] for r in store.outbox()] == ["run:notes:2.4.0b1:books"]
    assert "Models:" not in store.outbox()[0]["text"]
    assert fake.requests == []


def test_the_eval_command_prints_json_and_exits_by_verdict(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    loaded = write_config(tmp_path, fake.base, provider="openai")
    use_variants(monkeypatch, "baseline", "candidate-desc")
    monkeypatch.setenv("EVAL_TEST_API_KEY", API_KEY)
    args = ["--config", str(loaded.path), "eval", "--server", "notes", "--sdk-version", "2.4.0b1", "--trials", "1"]
    assert main([*args, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert {"server", "baseline_version", "candidate_version", "model", "trials", "verdict", "tasks", "totals"} <= set(
        out
    )
    assert (out["server"], out["baseline_version"], out["candidate_version"], out["trials"]) == (
        "notes",
        "2.3.0",
        "2.4.0b1",
        1,
    )
    task = out["tasks"][1]
    assert {"id", "baseline", "candidate", "regressed", "why"} <= set(task)
    assert {"success_rate", "tool_calls", "input_tokens", "output_tokens", "tool_errors", "trials"} <= set(
        task["baseline"]
    )
    assert API_KEY not in json.dumps(out)

    use_variants(monkeypatch, "baseline", "same")
    assert main([*args, "--baseline-version", "2.2.0"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("NO_REGRESSION: notes: no model-behaviour regression on 2.4.0b1 against 2.2.0")
    assert "count" in text and "100% → 100%" in text

    monkeypatch.delenv("EVAL_TEST_API_KEY")
    assert main([*args, "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"].startswith("skipped: EVAL_TEST_API_KEY not set")
    assert main(["--config", str(loaded.path), "eval", "--server", "nope", "--sdk-version", "1"]) == 2
