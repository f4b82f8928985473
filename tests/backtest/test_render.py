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
