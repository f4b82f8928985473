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


def test_fifty_five_failing_checks_are_one_phrase_and_one_sentence():
    server = Server.model_validate(
        {
            "name": "library",
            "team": "books",
            "sdk": "python",
            "language": "python",
            "path": ".",
            "start": ["x"],
            "baseline_sdk_version": "2.3.0",
        }
    )
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
