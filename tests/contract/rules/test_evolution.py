"""Family `evolution`: lints, each with its own fixture; a lint fails a diff only with --fail-on lints."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from tests.contract.helpers import obj, server_record, tool
from tests.contract.rules.helpers import STR, Case, Changes, as_json, assert_case_fires, tools_diff
from watcher.contract.diff import compare_list
from watcher.contract.normalize import LIST_BY_NAME
from watcher.contract.report import fails
from watcher.contract.rules import evolution
from watcher.contract.rules.base import Compared

TODAY = dt.date(2026, 11, 2)


def _described(name: str, description: str) -> dict[str, Any]:
    return {**tool(name, obj({"q": STR})), "description": description}


def _removal(description: str, today: dt.date | None = TODAY) -> Changes:
    spec = LIST_BY_NAME["tools"]
    old = _described("old_search", description)
    return as_json(compare_list(spec, {"old_search": old, "keep": tool("keep")}, {"keep": tool("keep")}, today=today))


def _servers(ttl: int, list_changed: bool) -> Changes:
    before = server_record()
    after = {
        **server_record(),
        "listTtlMs": {"tools": ttl},
        "capabilities": {"tools": {"listChanged": list_changed}},
    }
    return as_json(list(evolution.check(Compared(list_name="server", name="server", before=before, after=after))))


CASES: list[Case] = [
    (
        "deprecated, no date",
        "deprecated_without_removal_date",
        "description",
        False,
        False,
        lambda: tools_diff(
            [_described("s", "Search.")], [_described("s", "Search. Deprecated: use find.")], lints=True
        ),
    ),
    (
        "removed before the date it named",
        "removed_before_announced_date",
        None,
        False,
        False,
        lambda: _removal("Deprecated: removed after 2027-03-31; use find."),
    ),
    (
        "removed without notice",
        "removed_without_deprecation",
        None,
        False,
        False,
        lambda: _removal("Search issues."),
    ),
    (
        "long ttl, no listChanged",
        "long_ttl_without_list_changed",
        "listTtlMs.tools",
        False,
        False,
        lambda: _servers(86_400_000, list_changed=False),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_rule_fires(case: Case) -> None:
    assert_case_fires(case)


def test_lints_have_their_own_grade_and_fail_only_when_asked() -> None:
    report = {"changes": [c for c in _removal("Search issues.") if c["rule"] == "removed_without_deprecation"]}
    assert report["changes"][0]["grade"] == "lint"
    assert not fails(report, "clients") and not fails(report, "models")
    assert fails(report, "lints")


def test_a_dated_or_versioned_deprecation_is_no_lint() -> None:
    for text in ("Deprecated: removed on 2027-03-31.", "Deprecated; goes away in v3.0."):
        changes = tools_diff([_described("s", "Search.")], [_described("s", text)], lints=True)
        assert "deprecated_without_removal_date" not in {c["rule"] for c in changes}


def test_a_removal_after_the_promised_date_is_no_lint() -> None:
    rules = {c["rule"] for c in _removal("Deprecated: removed after 2026-10-01.")}
    assert rules.isdisjoint({"removed_before_announced_date", "removed_without_deprecation"})
    assert "removed_before_announced_date" not in {c["rule"] for c in _removal("Deprecated 2027-03-31", today=None)}


def test_a_short_ttl_or_a_declared_list_changed_is_no_lint() -> None:
    assert _servers(60_000, list_changed=False) == []
    assert _servers(86_400_000, list_changed=True) == []
