"""The whole evaluation path: real stdio MCP servers (two variants), the real `anthropic` and `openai` clients
talking to a loopback provider with a deterministic tool-choice policy, the paired comparison, the report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.evaluation.helpers import API_KEY, use_variants, write_config
from tests.fakes.model_provider import FakeProvider
from watcher.evaluation.run import REPORT_FILE, run_evaluation

pytestmark = [pytest.mark.timeout(180)]
ENV = {"EVAL_TEST_API_KEY": API_KEY}


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


def by_id(report: dict) -> dict[str, dict]:
    return {task["id"]: task for task in report["tasks"]}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_reworded_description_is_a_regression_on_exactly_the_task_it_affects(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch, provider: str
):
    loaded = write_config(tmp_path, fake.base, provider=provider)
    use_variants(monkeypatch, "baseline", "candidate-desc")
    report = run_evaluation(loaded, "notes", "2.4.0b1", environ=ENV)

    assert report["verdict"] == "regression"
    assert report["regressed_tasks"] == ["count"]
    count = by_id(report)["count"]
    assert (count["baseline"]["success_rate"], count["candidate"]["success_rate"]) == (1.0, 0.0)
    assert count["baseline"]["tools"] == {"count_notes": 3}
    assert count["candidate"]["tools"] == {"search_notes": 3}  # the policy now picks the wrong tool
    assert "the answer does not match" in count["why"][0]
    for other in ("save-note", "find", "small-talk"):
        assert not by_id(report)[other]["regressed"], by_id(report)[other]["why"]
        assert by_id(report)[other]["candidate"]["success_rate"] == 1.0
    assert report["partial"] is False and report["not_measured"] == []
    assert report["totals"]["pairs"] == 12
    assert report["totals"]["success"]["baseline_only"] == 3 and report["totals"]["success"]["candidate_only"] == 0
    assert report["baseline_version"] == "2.3.0" and report["candidate_version"] == "2.4.0b1"
    assert report["model"] == "fake-model-1" and report["provider"] == provider
    assert report["tools"]["baseline"] == ["add_note", "count_notes", "search_notes"]
    # The report is kept with the run's artifacts.
    stored = json.loads((Path(report["run_dir"]) / REPORT_FILE).read_text())
    assert stored["verdict"] == "regression"


def test_an_unchanged_contract_gives_no_regression(tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch):
    loaded = write_config(tmp_path, fake.base)
    use_variants(monkeypatch, "baseline", "same")
    report = run_evaluation(loaded, "notes", "2.4.0b1", environ=ENV)
    assert report["verdict"] == "no_regression", report["regressions"]
    assert report["regressions"] == [] and report["regressed_tasks"] == []
    timeless = [({**t["baseline"], "seconds": 0}, {**t["candidate"], "seconds": 0}) for t in report["tasks"]]
    assert all(old == new for old, new in timeless)
    assert report["totals"]["success"]["p_two_sided"] == 1.0
    assert report["totals"]["tool_calls"]["mean_delta"] == 0.0


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_no_tool_task_that_starts_calling_a_new_tool_is_flagged_with_deltas_from_the_usage_fields(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch, provider: str
):
    loaded = write_config(tmp_path, fake.base, provider=provider)
    use_variants(monkeypatch, "baseline", "candidate-newtool")
    report = run_evaluation(loaded, "notes", "2.4.0b1", environ=ENV)
    assert report["verdict"] == "regression"
    assert report["regressed_tasks"] == ["small-talk"]
    small_talk = by_id(report)["small-talk"]
    assert any(w == "calls a tool where none is needed: greet" for w in small_talk["why"])
    assert (small_talk["baseline"]["tool_calls"], small_talk["candidate"]["tool_calls"]) == (0, 1)
    assert report["tools"]["candidate"] == ["add_note", "count_notes", "search_notes", "greet"]

    totals = report["totals"]
    # The fake reports usage per response; candidate requests are the ones offering `greet`.
    all_in, all_out = fake.usage_total(provider)
    cand_in, cand_out = fake.usage_total(provider, marker="greet")
    assert totals["candidate"]["input_tokens"] == cand_in and totals["candidate"]["output_tokens"] == cand_out
    assert totals["baseline"]["input_tokens"] == all_in - cand_in
    assert totals["baseline"]["output_tokens"] == all_out - cand_out
    assert totals["input_tokens"]["total_delta"] == cand_in - (all_in - cand_in) > 0
    # small-talk: 0 → 1 call in each of its 3 pairs; every other pair is unchanged.
    assert totals["tool_calls"]["total_delta"] == 3
    assert totals["tool_calls"]["increased"] == 3 and totals["tool_calls"]["decreased"] == 0
    assert totals["tool_calls"]["mean_delta"] == pytest.approx(3 / 12, abs=1e-4)
    assert totals["candidate"]["tool_calls"] - totals["baseline"]["tool_calls"] == pytest.approx(3 / 12, abs=1e-4)
    # Every trial was a real call: one request per model turn, none served from a cache.
    turns = sum(t["steps"] for t in report["trial_records"])
    assert len([r for r in fake.requests if r["api"] == provider]) == turns


def test_tool_errors_are_counted_and_judged(tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch):
    loaded = write_config(tmp_path, fake.base)
    use_variants(monkeypatch, "baseline", "candidate-errors")
    report = run_evaluation(loaded, "notes", "2.4.0b1", environ=ENV)
    count = by_id(report)["count"]
    assert (count["baseline"]["tool_errors"], count["candidate"]["tool_errors"]) == (0, 3)
    assert any(w.startswith("tool errors per trial 0 → 1") for w in count["why"])
    assert report["totals"]["tool_errors"]["total_delta"] == 3
    assert report["regressed_tasks"] == ["count"]


def test_an_exhausted_trial_budget_gives_a_partial_result_that_says_what_was_not_measured(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
):
    loaded = write_config(tmp_path, fake.base, trials=2, budget={"max_trials": 6})
    use_variants(monkeypatch, "baseline", "same")
    report = run_evaluation(loaded, "notes", "2.4.0b1", environ=ENV)
    assert report["partial"] is True
    assert report["verdict"] == "error"  # nothing found, but not everything was looked at: no all-clear
    assert report["stopped"] == "budget exhausted: max_trials 6 reached (6 trials run)"
    assert report["totals"]["pairs"] == 3
    assert report["not_measured"] == [
        {"task": "count", "trials": [2], "of": 2, "reason": report["stopped"]},
        {"task": "find", "trials": [1, 2], "of": 2, "reason": report["stopped"]},
        {"task": "small-talk", "trials": [1, 2], "of": 2, "reason": report["stopped"]},
    ]
    assert by_id(report)["find"]["why"] == ["not measured"]


def test_a_token_budget_stops_the_run_and_a_regression_already_seen_is_still_named(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
):
    loaded = write_config(tmp_path, fake.base, trials=1, budget={"max_tokens": 1})
    use_variants(monkeypatch, "baseline", "candidate-desc")
    report = run_evaluation(loaded, "notes", "2.4.0b1", environ=ENV)
    assert report["stopped"].startswith("budget exhausted: max_tokens 1 spent")
    assert report["totals"]["pairs"] == 1  # the budget is checked before each pair
    assert [e["task"] for e in report["not_measured"]] == ["count", "find", "small-talk"]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_rate_limits_are_retried_by_the_sdk_and_then_succeed(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch, provider: str
):
    loaded = write_config(tmp_path, fake.base, provider=provider, trials=1)
    use_variants(monkeypatch, "baseline", "same")
    fake.fail_next = [429, 429]  # max_retries is 2: the third attempt is answered
    report = run_evaluation(loaded, "notes", "2.4.0b1", environ=ENV)
    assert report["verdict"] == "no_regression" and report["partial"] is False
    assert [r["status"] for r in fake.requests[:3]] == [429, 429, 200]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_provider_that_always_rate_limits_gives_a_partial_result(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch, provider: str
):
    loaded = write_config(tmp_path, fake.base, provider=provider, trials=1)
    use_variants(monkeypatch, "baseline", "same")
    fake.fail_always = 429
    report = run_evaluation(loaded, "notes", "2.4.0b1", environ=ENV)
    assert report["verdict"] == "error" and report["partial"] is True
    assert report["stop_kind"] == "rate_limited"
    assert "rate limited (HTTP 429) after 2 retries" in report["stopped"]
    assert len(fake.requests) == 3  # one call and the SDK's two retries, then the run stops
    assert [e["task"] for e in report["not_measured"]] == ["save-note", "count", "find", "small-talk"]
    assert report["totals"]["pairs"] == 0


def test_a_server_that_dies_mid_task_gives_a_partial_result(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
):
    loaded = write_config(tmp_path, fake.base, trials=1)
    use_variants(monkeypatch, "baseline", "dies")
    report = run_evaluation(loaded, "notes", "2.4.0b1", environ=ENV)
    assert report["partial"] is True and report["stop_kind"] == "server_gone"
    assert report["stopped"].startswith("candidate count trial 1: the server stopped answering during count_notes")
    assert report["totals"]["pairs"] == 1  # save-note was measured on both
    assert [e["task"] for e in report["not_measured"]] == ["count", "find", "small-talk"]
    assert report["verdict"] == "error"
    died = [t for t in report["trial_records"] if t["side"] == "candidate" and t["task"] == "count"]
    assert died[0]["outcome"] == "error" and died[0]["tool_calls"] == 1


def test_the_api_key_reaches_the_provider_only(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    monkeypatch.setenv("EVAL_TEST_API_KEY", API_KEY)
    caplog.set_level("DEBUG")
    loaded = write_config(tmp_path, fake.base, trials=1)
    use_variants(monkeypatch, "baseline", "same", env_dump=tmp_path)
    report = run_evaluation(loaded, "notes", "2.4.0b1")
    assert report["verdict"] == "no_regression"
    assert {r["api_key"] for r in fake.requests} == {API_KEY}  # the provider got it
    for side in ("baseline", "candidate"):
        server_env = json.loads((tmp_path / f"{side}.json").read_text())
        assert "EVAL_TEST_API_KEY" not in server_env
        assert API_KEY not in json.dumps(server_env)
    assert API_KEY not in (Path(report["run_dir"]) / REPORT_FILE).read_text()
    assert API_KEY not in json.dumps(report)
    assert API_KEY not in caplog.text


def test_a_missing_key_or_missing_evaluation_is_an_error_that_measures_nothing(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
):
    loaded = write_config(tmp_path, fake.base)
    use_variants(monkeypatch, "baseline", "same")
    report = run_evaluation(loaded, "notes", "2.4.0b1", environ={})
    assert report["verdict"] == "skipped"
    assert report["error"] == "skipped: EVAL_TEST_API_KEY not set (the anthropic API key is read from it)"
    assert fake.requests == []
