"""Family `renames`: a removal paired with an addition of a similar name and a compatible input."""

from __future__ import annotations

from typing import Any

import pytest

from tests.contract.helpers import obj, tool
from tests.contract.rules.helpers import INT, STR, Case, assert_case_fires, list_diff, prompt, tools_diff
from watcher.contract.diff import compare_list
from watcher.contract.normalize import LIST_BY_NAME
from watcher.contract.report import change_json

NUM = {"type": "number"}

CASES: list[Case] = [
    (
        "camelCase to kebab-case",
        "tool_renamed",
        None,
        True,
        True,
        lambda: tools_diff(
            [tool("getWidget", obj({"id": STR}, ["id"]))], [tool("get-widget", obj({"id": STR}, ["id"]))]
        ),
    ),
    (
        "prompt snake to kebab",
        "prompt_renamed",
        None,
        True,
        True,
        lambda: list_diff(
            "prompts",
            [prompt("list_items", {"name": "filter", "required": False})],
            [prompt("list-items", {"name": "filter", "required": False})],
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_rule_fires(case: Case) -> None:
    assert_case_fires(case)


def _renames(changes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(c["before"], c["after"]) for c in changes if c["rule"] == "tool_renamed"]


def test_snake_to_kebab_is_one_rename_not_a_removal_and_an_addition() -> None:
    changes = tools_diff([tool("list_items", obj({"q": STR}))], [tool("list-items", obj({"q": STR}))])
    assert [c["rule"] for c in changes if c["rule"] != "description_changed"] == ["tool_renamed"]
    assert _renames(changes) == [("list_items", "list-items")]


def test_a_new_name_with_the_same_parameters_is_a_rename() -> None:
    before = [tool("add", obj({"a": NUM, "b": NUM}, ["a", "b"])), tool("echo", obj({"text": STR}, ["text"]))]
    after = [tool("sum_numbers", obj({"a": NUM, "b": NUM}, ["a", "b"])), tool("echo", obj({"text": STR}, ["text"]))]
    changes = tools_diff(before, after)
    assert _renames(changes) == [("add", "sum_numbers")]
    assert "the only entries with this input schema" in changes[0]["hint"]


def test_one_common_parameter_alone_is_no_evidence_of_a_rename() -> None:
    schema = obj({"query": STR}, ["query"])
    changes = tools_diff([tool("search_issues", schema)], [tool("find_issues", schema)])
    assert sorted(c["rule"] for c in changes) == ["tool_added", "tool_removed"]


def test_the_report_names_the_host_permission_and_the_alias_advice() -> None:
    spec = LIST_BY_NAME["tools"]
    changes = compare_list(
        spec,
        {"getWidget": tool("getWidget", obj({"id": STR}))},
        {"get-widget": tool("get-widget", obj({"id": STR}))},
        server_name="shop",
    )
    (renamed,) = [change_json(c) for c in changes if c.rule.id == "tool_renamed"]
    assert "mcp__shop__getWidget stops matching" in renamed["hint"]
    assert "deprecated alias for a release" in renamed["hint"]
    assert "same name once case and separators are ignored" in renamed["hint"]


def test_a_rename_with_a_new_required_parameter_is_not_paired() -> None:
    changes = tools_diff(
        [tool("get_widget", obj({"id": STR}))], [tool("get-widget", obj({"id": STR, "v": INT}, ["v"]))]
    )
    assert sorted(c["rule"] for c in changes) == ["tool_added", "tool_removed"]


def test_other_changes_of_a_renamed_tool_are_reported_under_its_old_name() -> None:
    changes = tools_diff([tool("getWidget", obj({"id": STR}))], [tool("get-widget", obj({"id": INT}))])
    assert [c["rule"] for c in changes if c["rule"] != "description_changed"] == ["tool_renamed", "type_changed"]
    # The new name had no callers: no finding names it as if it had existed before.
    assert {c["name"] for c in changes} == {"getWidget"}


def test_unrelated_tools_stay_removed_and_added() -> None:
    changes = tools_diff([tool("zip", obj({"files": {"type": "object"}}))], [tool("weather", obj({"city": STR}))])
    assert sorted(c["rule"] for c in changes) == ["tool_added", "tool_removed"]


# -- near misses, both ways: the documented measures and thresholds ---------------------------------

OWNER_REPO = obj({"owner": STR, "repo": STR}, ["owner", "repo"])


def test_a_one_letter_name_difference_with_a_different_word_is_no_rename() -> None:
    # "list_commits" and "list_comments" are 87 % alike letter by letter, but share one word of two.
    before = [tool("list_commits", OWNER_REPO, description="Get the commits of a branch.")]
    after = [tool("list_comments", OWNER_REPO, description="List the comments on an issue.")]
    assert sorted(c["rule"] for c in tools_diff(before, after)) == ["tool_added", "tool_removed"]


def test_same_parameters_but_another_purpose_is_no_rename() -> None:
    before = [tool("delete_branch", OWNER_REPO, description="Delete a branch of the repository.")]
    after = [tool("fork_repository", OWNER_REPO, description="Fork a repository to your account.")]
    assert sorted(c["rule"] for c in tools_diff(before, after)) == ["tool_added", "tool_removed"]


def test_same_parameters_and_the_same_purpose_in_other_words_is_a_rename() -> None:
    before = [tool("add", obj({"a": NUM, "b": NUM}, ["a", "b"]), description="Adds two numbers")]
    after = [tool("get-sum", obj({"a": NUM, "b": NUM}, ["a", "b"]), description="Returns the sum of two numbers")]
    changes = tools_diff(before, after)
    assert _renames(changes) == [("add", "get-sum")]
    assert "descriptions 50% alike" in changes[0]["hint"]


def test_a_name_just_over_the_threshold_with_half_the_parameters_is_a_rename() -> None:
    # Word containment (0.85 ≥ 0.8) and parameter names {q, limit} ∩ {q} / ∪ = 0.5 ≥ 0.5.
    before = [tool("search", obj({"q": STR, "limit": INT}, ["q"]))]
    after = [tool("search_items", obj({"q": STR}, ["q"]))]
    assert _renames(tools_diff(before, after)) == [("search", "search_items")]


def test_a_name_match_with_too_few_shared_parameters_is_no_rename() -> None:
    # Same words, but parameter names {q, limit, page} vs {q}: Jaccard 1/3 < 0.5.
    before = [tool("search", obj({"q": STR, "limit": INT, "page": INT}, ["q"]))]
    after = [tool("search_items", obj({"q": STR}, ["q"]))]
    assert sorted(c["rule"] for c in tools_diff(before, after)) == ["tool_added", "tool_removed"]


def test_no_parameter_finding_is_reported_on_an_item_that_did_not_exist_before() -> None:
    before = [tool("list_commits", obj({"owner": STR, "repo": STR, "sha": STR}, ["owner", "repo"]))]
    after = [tool("list_comments", obj({"owner": STR, "repo": STR}, ["owner", "repo"]))]
    changes = tools_diff(before, after)
    assert {(c["rule"], c["name"]) for c in changes} == {
        ("tool_removed", "list_commits"),
        ("tool_added", "list_comments"),
    }
