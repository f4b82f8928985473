"""The evaluation report across versions: evaluation.json files written by release 48c8349 (recorded on that
release: tests/fixtures/evaluation_48c8349/README.md) load with the current reader and render as the CLI's table
and the Slack reply; what `run_evaluation` writes loads as it is; anything else is refused naming the field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.evaluation.helpers import API_KEY, use_variants, write_config
from tests.fakes.model_provider import FakeProvider
from watcher.evaluation.notices import headline, render, totals_line
from watcher.evaluation.report import EvaluationReportError, load_evaluation
from watcher.evaluation.run import REPORT_FILE, read_evaluation, run_evaluation

OLD = Path(__file__).resolve().parents[1] / "fixtures" / "evaluation_48c8349"
REPORTS = sorted(OLD.glob("report_*.json"))


def _old(name: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((OLD / f"report_{name}.json").read_text(encoding="utf-8"))
    return data


def test_the_recorded_reports_are_what_they_claim():
    assert [p.stem for p in REPORTS] == ["report_partial", "report_regression", "report_skipped"]
    assert _old("regression")["verdict"] == "regression" and _old("regression")["regressed_tasks"] == ["count"]
    assert _old("partial")["partial"] is True and _old("partial")["stop_kind"] == "budget"
    assert _old("skipped")["verdict"] == "skipped" and _old("skipped")["totals"] == {}


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_a_report_written_by_48c8349_loads_and_renders(path: Path):
    report = read_evaluation(path)
    assert report == json.loads(path.read_text(encoding="utf-8"))  # handed back as written
    text, blocks = render(report)
    assert headline(report) in text and blocks
    if report["verdict"] == "regression":
        assert "count: success 3/3 → 0/3" in text and "notes: models do worse on 2.4.0b1" in text
        assert (totals_line(report) or "").startswith("12 paired trials; success lost in 3, gained in 0")
    if report["partial"]:
        assert "find: trials 1–2 of 2 not measured (budget exhausted" in text


def test_what_run_evaluation_writes_loads_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with FakeProvider() as fake:
        loaded = write_config(tmp_path, fake.base)
        use_variants(monkeypatch, "baseline", "same")
        report = run_evaluation(loaded, "notes", "2.4.0b1", environ={"EVAL_TEST_API_KEY": API_KEY})
    assert report["verdict"] == "no_regression" and report["trial_records"]
    assert read_evaluation(Path(report["run_dir"]) / REPORT_FILE) == json.loads(json.dumps(report))


def _without(key: str) -> Callable[[dict[str, object]], object]:
    return lambda r: {k: v for k, v in r.items() if k != key}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda r: [r], "an evaluation report is a JSON object, not list"),
        (_without("verdict"), "verdict: Field required"),
        (lambda r: {**r, "partial": "maybe"}, "partial: Input should be a valid boolean"),
        (lambda r: {**r, "totals": {**r["totals"], "pairs": "many"}}, "totals.pairs: Input should be a valid integer"),
        (lambda r: {**r, "not_measured": [{"task": "find"}]}, "not_measured.0.reason: Field required"),
    ],
)
def test_a_report_of_no_known_shape_is_refused_naming_the_field(change, named: str):
    with pytest.raises(EvaluationReportError) as caught:
        load_evaluation(change(_old("regression")), "evaluation.json")
    assert str(caught.value).startswith("evaluation.json: ") and named in str(caught.value)


def test_fields_a_later_version_adds_are_kept():
    later = {**_old("skipped"), "cost_dollars": 0.0}
    assert load_evaluation(later, "evaluation.json") == later
