"""The answer per release line: episodes, lead times, final-only problems, neutral versions; the problems a
report names."""

from __future__ import annotations

from datetime import UTC, datetime

from watcher.backtest.analysis import FINAL_ONLY, FIXED, OPEN, WARNED, Point, findings
from watcher.backtest.history import line_of
from watcher.backtest.problems import Judgement, Problem, judge

START = Problem("start", "start", "the server no longer starts")
ALL = ["install", "start", "conformance", "contract"]


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


def point(version: str, day: str, pre: bool, *problems: Problem, judged: list[str] = ALL) -> Point:
    return Point(
        version, at(day), pre, line_of(version), "fail" if problems else "pass", Judgement(list(problems), judged)
    )


def test_a_problem_first_shown_by_a_prerelease_has_the_days_to_the_final_as_lead_time():
    [found] = findings(
        [
            point("1.27.2", "2026-05-29", False),
            point("2.0.0a1", "2026-06-11", True, START),
            point("2.0.0b1", "2026-06-30", True, START),
            point("2.0.0", "2026-07-28", False, START),
        ]
    )
    assert (found.status, found.first_version, found.final_version, found.lead_days) == (WARNED, "2.0.0a1", "2.0.0", 47)
    assert found.sentence() == (
        "2.0.0a1 (2026-06-11) would have told you the server no longer starts under 2.x: 47 days before 2.0.0"
    )


def test_a_problem_only_a_final_showed_is_final_only_without_lead_time():
    change = Problem("contract", "error_code_changed:unknown_resource.code", "a change that breaks clients")
    [found] = findings([point("2.0.0rc1", "2026-07-27", True), point("2.0.0", "2026-07-28", False, change)])
    assert (found.status, found.first_version, found.lead_days) == (FINAL_ONLY, "2.0.0", None)


def test_lines_are_apart_and_an_interleaved_1x_final_does_not_end_a_2x_episode():
    found = findings(
        [
            point("2.0.0a1", "2026-06-11", True, START),
            point("1.28.1", "2026-06-26", False),
            point("2.0.0", "2026-07-28", False, START),
        ]
    )
    assert [(f.line, f.status, f.lead_days) for f in found] == [("2.x", WARNED, 47)]


def test_fixed_before_a_final_open_at_the_end_and_a_neutral_version_in_between():
    fixed = findings([point("2.0.0a1", "2026-06-11", True, START), point("2.0.0b1", "2026-06-30", True)])
    assert [(f.status, f.final_version) for f in fixed] == [(FIXED, None)]
    still = findings([point("2.0.0a1", "2026-06-11", True, START), point("2.0.0b1", "2026-06-30", True, START)])
    assert [f.status for f in still] == [OPEN]
    # b1 did not install: it says nothing about starting, so the episode opened by a1 runs on to the final.
    install = Problem("install", "install", "mcp no longer installs")
    neutral = findings(
        [
            point("2.0.0a1", "2026-06-11", True, START),
            point("2.0.0b1", "2026-06-30", True, install, judged=["install"]),
            point("2.0.0", "2026-07-28", False, START),
        ]
    )
    assert [(f.problem.kind, f.status, f.lead_days) for f in neutral] == [
        ("start", WARNED, 47),
        ("install", FIXED, None),
    ]


def test_no_problem_no_finding():
    assert findings([point("1.27.2", "2026-05-29", False), point("2.0.0", "2026-07-28", False)]) == []


def test_release_lines():
    assert [line_of(v) for v in ("2.0.0a1", "1.27.2", "v1.6.0-pre.1", "0.9.0-preview.1", "3.0.0-beta.1")] == [
        "2.x",
        "1.x",
        "1.x",
        "0.9.x",
        "3.x",
    ]


def _report(**parts: object) -> dict:
    return {"sdk_package": "mcp", "install": {"ok": True}, "start": {"ok": True}, "conformance": [], **parts}


def test_problems_of_a_report():
    assert judge(_report(install={"ok": False, "error": "no matching distribution"}), None).problems == [
        Problem("install", "install", "mcp no longer installs", "no matching distribution")
    ]
    failed = judge(
        _report(start={"ok": False, "evidence": "Traceback\nModuleNotFoundError: No module named 'x'"}), None
    )
    assert failed.problems == [
        Problem("start", "start", "the server no longer starts", "ModuleNotFoundError: No module named 'x'")
    ]
    assert "contract" not in failed.judged and "conformance" not in failed.judged
    sets = [{"requirements": "2026-07-28", "unexpected_failures": ["tools-call"], "stale_entries": ["ping"]}]
    change = {"rule": "tool_removed", "path": "tools.find", "breaksClients": True, "before": "x", "after": None}
    harmless = {"rule": "description_changed", "path": "tools.find.description", "breaksClients": False}
    judged = judge(_report(conformance=sets, contract={"changes": [change, harmless]}), None)
    assert [(p.kind, p.key) for p in judged.problems] == [
        ("conformance", "2026-07-28:tools-call"),
        ("contract", "tool_removed:tools.find"),
    ]
    assert "deprecation" not in judged.judged  # no reference run: warnings are not judged


def test_a_deprecation_warning_is_new_only_against_the_release_the_team_was_on():
    old = {"kind": "MCPDeprecationWarning", "message": "streamable_http_path is deprecated"}
    new = {"kind": "MCPDeprecationWarning", "message": "FastMCP is deprecated; use MCPServer"}
    reference = _report(deprecation_warnings=[old])
    judged = judge(_report(deprecation_warnings=[old, new]), reference)
    assert [p.text for p in judged.problems] == ["a new SDK deprecation warning: FastMCP is deprecated; use MCPServer"]
