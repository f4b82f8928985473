"""The renderings sum up many problems of one kind: one phrase per version and kind, one sentence per group."""

from __future__ import annotations

from datetime import UTC, date, datetime

from watcher.backtest.history import Period, Replayed
from watcher.backtest.render import render_markdown, render_text
from watcher.backtest.replay import Slot, build_answer
from watcher.suites.settings import Server


def replayed(version: str, day: str, pre: bool) -> Replayed:
    return Replayed(version, datetime.fromisoformat(day).replace(hour=9, tzinfo=UTC), pre, False, version[0] + ".x")


def report(verdict: str, failures: list[str]) -> dict:
    sets = [{"requirements": "2026-07-28", "unexpected_failures": failures, "stale_entries": []}]
    return {
        "verdict": verdict,
        "sdk_package": "mcp",
        "install": {"ok": True},
        "start": {"ok": True},
        "conformance": sets,
    }


SERVER = {
    "name": "library",
    "team": "books",
    "sdk": "python",
    "language": "python",
    "path": ".",
    "start": ["x"],
    "baseline_sdk_version": "2.3.0",
}


def test_fifty_five_failing_checks_are_one_phrase_and_one_sentence():
    server = Server.model_validate(SERVER)
    checks = [f"check-{n:02d}" for n in range(55)]
    versions = [
        replayed("2.0.0a1", "2026-06-11", True),
        replayed("2.0.0rc1", "2026-07-27", True),
        replayed("2.0.0", "2026-07-28", False),
    ]
    slots = [
        Slot(versions[0], 0, "k0", "fail", report("fail", checks)),
        Slot(versions[1], 1, "k1", "pass", report("pass", [])),
        Slot(versions[2], 2, "k2", "pass", report("pass", []), reused=True),
    ]
    period = Period(versions, [], ["1.28.0"])
    answer = build_answer(7, server, "pypi", "mcp", date(2026, 6, 1), date(2026, 12, 1), period, slots, "done")
    assert len(answer["findings"]) == 55 and {f["status"] for f in answer["findings"]} == {"fixed"}
    text = render_text(answer)
    assert "55 conformance checks that now fail (2026-07-28:check-00, 2026-07-28:check-01, …)" in text
    assert text.count("fixed before a final shipped it") == 1
    assert "not replayed (older lines or backports below the server's baseline): 1.28.0" in text
    markdown = render_markdown(answer)
    assert markdown.count("| 2.x |") == 1 and "| fixed |" in markdown


def test_an_interrupted_backtest_lists_the_versions_not_run_and_never_says_no_problem_appeared():
    versions = [
        replayed("2.0.0a1", "2026-06-11", True),
        replayed("2.0.0rc1", "2026-07-27", True),
        replayed("2.0.0", "2026-07-28", False),
    ]
    slots = [
        Slot(versions[0], 0, "k0", "pass", report("pass", [])),
        Slot(versions[1], 1, "k1"),
        Slot(versions[2], 2, "k2"),
    ]
    period = Period(versions, [], [])
    server = Server.model_validate(SERVER)
    answer = build_answer(8, server, "pypi", "mcp", date(2026, 6, 1), date(2026, 12, 1), period, slots, "interrupted")
    assert answer["findings"] == [] and answer["not_run"] == ["2.0.0rc1", "2.0.0"]
    for rendered in (render_text(answer), render_markdown(answer)):
        assert "No problem appeared" not in rendered
        assert "This backtest is interrupted after 1 of 3 versions: run the same command again" in rendered
        assert "not run: 2.0.0rc1, 2.0.0" in rendered
    done = build_answer(8, server, "pypi", "mcp", date(2026, 6, 1), date(2026, 12, 1), period, slots[:1], "done")
    assert "No problem appeared in any version of the period" in render_text(done)


def test_one_version_is_not_called_versions():
    """Issue 37: the headline said "(1 versions)"."""
    server = Server.model_validate(
        {"name": "library", "team": "books", "sdk": "python", "language": "python", "path": ".", "start": ["x"],
         "baseline_sdk_version": "2.3.0"}
    )  # fmt: skip
    only = [replayed("2.0.0rc1", "2026-07-27", True)]
    period = Period(only, [], [])
    one = build_answer(8, server, "pypi", "mcp", date(2026, 6, 1), date(2026, 12, 1), period,
                       [Slot(only[0], 0, "k0", "pass", report("pass", []))], "done")  # fmt: skip
    assert "(1 version)" in render_text(one).splitlines()[0]
    assert "versions)" not in render_text(one)


def test_no_label_covers_another_on_the_backtest_picture():
    """Issue 37: 2.0's alphas, a few days apart, drew their version numbers over each other (rotated labels
    stacked three high). The labels' boxes are read back from the figure: none overlaps, and every version is
    either labelled or said to be left out."""
    from watcher.backtest import timeline
    from watcher.digest.labels import overlapping

    server = Server.model_validate(
        {"name": "library", "team": "books", "sdk": "python", "language": "python", "path": ".", "start": ["x"],
         "baseline_sdk_version": "2.3.0"}
    )  # fmt: skip
    days = [
        ("1.27.0", "2026-05-02", False), ("1.27.1", "2026-05-20", False), ("1.27.2", "2026-06-02", False),
        ("2.0.0a1", "2026-06-11", True), ("2.0.0a2", "2026-06-13", True), ("2.0.0a3", "2026-06-15", True),
        ("2.0.0a4", "2026-06-17", True), ("2.0.0b1", "2026-06-30", True), ("2.0.0b2", "2026-07-08", True),
        ("2.0.0rc1", "2026-07-20", True), ("2.0.0", "2026-07-28", False), ("2.0.1", "2026-08-04", False),
    ]  # fmt: skip
    versions = [replayed(v, d, pre) for v, d, pre in days]
    outcome = {"1": ("pass", report("pass", [])), "2": ("fail", report("fail", ["check-a"]))}
    slots = [Slot(v, i, f"k{i}", *outcome[v.version[0]]) for i, v in enumerate(versions)]
    answer = build_answer(9, server, "pypi", "mcp", date(2026, 5, 1), date(2026, 12, 1), Period(versions, [], []),
                          slots, "done")  # fmt: skip
    picture = timeline.render(answer)
    assert overlapping(picture.labels) == []
    shown = {box.text for box in picture.labels}
    for version, _, _ in days:
        assert (version in shown) != (version in picture.hidden_labels), version
    assert len(picture.hidden_labels) <= 1, picture.hidden_labels
    assert any(text.startswith("47 d: ") for text in shown), "the lead time's label"
