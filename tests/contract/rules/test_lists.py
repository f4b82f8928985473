"""Family `lists`: entries added to or removed from a list.
Each rule fires on a minimal before/after pair, with its grade."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contract.helpers import obj, tool
from tests.contract.rules.helpers import (
    STR,
    Case,
    assert_case_fires,
    list_diff,
    profiles_diff,
    prompt,
    tools_diff,
    write_profiles,
)
from watcher.contract.diff import diff_snapshots

CASES: list[Case] = [
    ("tool added", "tool_added", None, False, True, lambda: tools_diff([], [tool("a")])),
    ("tool removed", "tool_removed", None, True, True, lambda: tools_diff([tool("a")], [])),
    (
        "tool offered only to a client declaring elicitation",
        "tool_requires_capability",
        None,
        True,
        True,
        lambda: profiles_diff(
            {"typical": [tool("a"), tool("ask")], "none": [tool("a"), tool("ask")]},
            {"typical": [tool("a"), tool("ask")], "none": [tool("a")]},
        ),
    ),
    ("prompt added", "prompt_added", None, False, False, lambda: list_diff("prompts", [], [prompt("p")])),
    ("prompt removed", "prompt_removed", None, True, False, lambda: list_diff("prompts", [prompt("p")], [])),
    (
        "resource added",
        "resource_added",
        None,
        False,
        False,
        lambda: list_diff("resources", [], [{"uri": "r://a", "name": "a"}]),
    ),
    (
        "resource removed",
        "resource_removed",
        None,
        True,
        False,
        lambda: list_diff("resources", [{"uri": "r://a", "name": "a"}], []),
    ),
    (
        "template added",
        "resource_template_added",
        None,
        False,
        False,
        lambda: list_diff("resource-templates", [], [{"uriTemplate": "r://{id}", "name": "a"}]),
    ),
    (
        "template removed",
        "resource_template_removed",
        None,
        True,
        False,
        lambda: list_diff("resource-templates", [{"uriTemplate": "r://{id}", "name": "a"}], []),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_rule_triggers_with_its_grade(case: Case) -> None:
    assert_case_fires(case)


def test_removed_tool_gets_a_rename_hint_and_stays_breaking() -> None:
    schema = obj({"query": STR}, ["query"])
    changes = tools_diff([tool("search_issues", schema)], [tool("find_issues", schema)])
    removed = next(c for c in changes if c["kind"] == "removed")
    assert removed["breaksClients"] is True
    assert "find_issues" in removed["hint"]
    assert {c["kind"] for c in changes} == {"removed", "added"}


def test_unrelated_removed_tool_gets_no_hint() -> None:
    changes = tools_diff(
        [tool("delete_everything", obj({"force": {"type": "boolean"}}))], [tool("search", obj({"q": STR}))]
    )
    assert "hint" not in next(c for c in changes if c["kind"] == "removed")


def test_a_tool_gone_for_a_bare_client_only_is_reported_under_that_profile() -> None:
    changes = profiles_diff(
        {"typical": [tool("a"), tool("ask")], "none": [tool("a"), tool("ask")]},
        {"typical": [tool("a"), tool("ask")], "none": [tool("a")]},
    )
    assert [(c["rule"], c["name"], c["profile"]) for c in changes] == [("tool_requires_capability", "ask", "none")]
    assert "elicitation" in changes[0]["hint"] and changes[0]["after"] == ["elicitation", "roots", "sampling"]


def test_a_tool_gone_under_every_profile_is_removed_once_naming_all() -> None:
    changes = profiles_diff(
        {"typical": [tool("a"), tool("b")], "none": [tool("a"), tool("b")]},
        {"typical": [tool("a")], "none": [tool("a")]},
    )
    assert [(c["rule"], c["name"], c["profile"]) for c in changes] == [("tool_removed", "b", "typical, none")]


def test_a_profile_the_baseline_lacks_is_noted_not_compared(tmp_path: Path) -> None:
    base = write_profiles(tmp_path / "base", {"typical": [tool("a")]})
    cand = write_profiles(tmp_path / "cand", {"typical": [tool("a")], "none": []})
    report = diff_snapshots(base, cand)
    assert report["changes"] == []
    assert "client profile none: not in the baseline snapshot; not compared" in report["notes"]
