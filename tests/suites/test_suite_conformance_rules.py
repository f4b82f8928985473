"""The suite's four exit rules over checks.json results, per scenario and per check, and the baseline file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.suites.helpers import check, checks_file
from watcher.suites.judge.conformance import (
    Baseline,
    ConformanceError,
    RequirementSet,
    collapse,
    collect_checks,
    evaluate,
    expected_failures_path,
    load_baseline,
)

SET = RequirementSet(
    "2026-07-28",
    scored=("tools-list", "tools-call-image", "server-stateless", "ping"),
    not_scored={"tasks-lifecycle": "extension", "json-schema-2020-12": "pending"},
)


def results(**by_scenario: list[dict]) -> dict[str, list[dict]]:
    return {name.replace("_", "-"): checks for name, checks in by_scenario.items()}


def baseline(*entries: str) -> Baseline:
    scenarios = frozenset(e for e in entries if ":" not in e)
    checks: dict[str, set[str]] = {}
    for e in entries:
        if ":" in e:
            s, c = e.split(":", 1)
            checks.setdefault(s, set()).add(c)
    return Baseline(Path("baseline.yml"), scenarios, {s: frozenset(c) for s, c in checks.items()})


PASSING = results(
    tools_list=[check("tools-list", "SUCCESS"), check("wire-schema-valid", "SUCCESS")],
    tools_call_image=[check("tools-call-image", "SUCCESS")],
    server_stateless=[check("a", "SUCCESS"), check("b", "SUCCESS")],
    ping=[check("ping", "SUCCESS")],
)


def with_(base: dict[str, list[dict]], **changes: list[dict]) -> dict[str, list[dict]]:
    return {**base, **results(**changes)}


@pytest.mark.parametrize(
    ("name", "data", "entries", "expected", "unexpected", "stale"),
    [
        ("passes, unlisted: pass", PASSING, (), [], [], []),
        (
            "fails, listed: expected failure",
            with_(PASSING, tools_call_image=[check("tools-call-image", "FAILURE")]),
            ("tools-call-image",),
            ["tools-call-image"],
            [],
            [],
        ),
        (
            "fails, unlisted: regression",
            with_(PASSING, tools_call_image=[check("tools-call-image", "FAILURE", "no image")]),
            (),
            [],
            ["tools-call-image"],
            [],
        ),
        ("passes, listed: stale entry", PASSING, ("ping",), [], [], ["ping"]),
        (
            "per check: the listed check is excused, another failing check is a regression",
            with_(PASSING, server_stateless=[check("a", "FAILURE"), check("b", "WARNING")]),
            ("server-stateless:a",),
            ["server-stateless:a"],
            ["server-stateless:b"],
            [],
        ),
        (
            "per check: a listed check that now passes is stale",
            PASSING,
            ("server-stateless:a",),
            [],
            [],
            ["server-stateless:a"],
        ),
        (
            "per check: a listed check that is absent or skipped is tolerated",
            with_(PASSING, server_stateless=[check("b", "SUCCESS"), check("c", "SKIPPED")]),
            ("server-stateless:a", "server-stateless:c"),
            [],
            [],
            [],
        ),
        (
            "per check: repeated ids collapse, most severe first",
            with_(PASSING, server_stateless=[check("a", "SUCCESS"), check("a", "FAILURE"), check("a", "SUCCESS")]),
            ("server-stateless:a",),
            ["server-stateless:a"],
            [],
            [],
        ),
        (
            "a scored scenario with no results counts as failing",
            {k: v for k, v in PASSING.items() if k != "ping"},
            (),
            [],
            ["ping"],
            [],
        ),
    ],
)
def test_four_exit_rules(name, data, entries, expected, unexpected, stale):
    report = evaluate(data, SET, baseline(*entries))
    assert report["expected_failures"] == expected, name
    assert report["unexpected_failures"] == unexpected, name
    assert report["stale_entries"] == stale, name
    assert report["ok"] is (not unexpected and not stale)
    assert report["passed"] + report["failed"] == len(SET.scored)


def test_unscored_scenarios_are_reported_apart_and_never_decide():
    data = with_(
        PASSING,
        tasks_lifecycle=[check("sep-2663-x", "FAILURE")],
        json_schema_2020_12=[check("json-schema-2020-12-tool-found", "SUCCESS")],
    )
    report = evaluate(data, SET, baseline())
    assert report["ok"] is True
    assert report["unexpected_failures"] == []
    assert report["unscored"] == [
        {"scenario": "json-schema-2020-12", "reason": "pending", "passed": True, "failing_checks": []},
        {"scenario": "tasks-lifecycle", "reason": "extension", "passed": False, "failing_checks": ["sep-2663-x"]},
    ]


def test_failure_messages_name_the_check():
    data = with_(PASSING, tools_call_image=[check("tools-call-image", "FAILURE", "Missing image content")])
    report = evaluate(data, SET, baseline())
    assert report["failure_messages"] == {"tools-call-image": "tools-call-image: Missing image content"}


def test_without_a_baseline_warnings_do_not_fail_as_the_suite_does():
    data = with_(PASSING, server_stateless=[check("a", "WARNING")])
    assert evaluate(data, SET, Baseline(None))["ok"] is True
    assert evaluate(data, SET, baseline())["unexpected_failures"] == ["server-stateless"]


def test_collapse_ignores_info():
    assert collapse([check("x", "INFO"), check("y", "SKIPPED"), check("y", "SUCCESS")]) == {"y": "SUCCESS"}


def test_collect_checks_reads_the_cli_layout_and_keeps_the_latest_run(tmp_path: Path):
    checks_file(tmp_path, "tools-list", [check("tools-list", "FAILURE")], stamp="2026-11-29T10-00-00-000Z")
    checks_file(tmp_path, "tools-list", [check("tools-list", "SUCCESS")], stamp="2026-11-29T10-00-05-000Z")
    checks_file(tmp_path, "auth/metadata-default", [check("m", "SUCCESS")])
    (tmp_path / "server-broken-2026-11-29T10-00-00-000Z").mkdir()
    (tmp_path / "server-broken-2026-11-29T10-00-00-000Z" / "checks.json").write_text("{not json")
    found = collect_checks(tmp_path)
    assert found["tools-list"] == [check("tools-list", "SUCCESS")]
    assert found["auth/metadata-default"][0]["id"] == "m"
    assert found["broken"][0]["status"] == "FAILURE"
    assert "unreadable checks.json" in found["broken"][0]["errorMessage"]


def test_load_baseline_reads_scenarios_and_checks(tmp_path: Path):
    path = tmp_path / "conformance-baseline.yml"
    path.write_text("server:\n  - tools-call-image\n  - server-stateless:a\n  - server-stateless:b\nclient:\n  - x\n")
    loaded = load_baseline(path)
    assert loaded.scenarios == {"tools-call-image"}
    assert loaded.checks == {"server-stateless": {"a", "b"}}
    assert loaded.entries == ["tools-call-image", "server-stateless:a", "server-stateless:b"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("server:\n  - ok\n  - server-stateless: a\n", ":3: server: each entry is"),
        ("server:\n  - ':a'\n", ":2: server: ':a': both sides of the colon are required"),
        ("server:\n  - tools-list\n  - tools-list:x\n", ":2: server: 'tools-list' is listed whole and per check"),
        ("server: tools-list\n", ":1: server: expected a list of scenario names"),
        ("server: [\n", "not valid YAML"),
        ("- a\n", ":1: expected a mapping"),
    ],
)
def test_load_baseline_errors_name_file_and_line(tmp_path: Path, text: str, message: str):
    path = tmp_path / "bad.yml"
    path.write_text(text)
    with pytest.raises(ConformanceError) as info:
        load_baseline(path)
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)


def test_missing_baseline_file_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ConformanceError, match="cannot read the expected-failures file"):
        load_baseline(tmp_path / "nope.yml")


def test_per_requirement_set_files_by_placeholder(tmp_path: Path):
    assert expected_failures_path(tmp_path / "a.yml", "2025-11-25") == tmp_path / "a.yml"
    assert expected_failures_path(tmp_path / "b-{requirements}.yml", "2025-11-25") == tmp_path / "b-2025-11-25.yml"
    assert expected_failures_path(None, "2025-11-25") is None
