"""Family `prompts`: a prompt's arguments.
Each rule fires on a minimal before/after pair, with its grade."""

from __future__ import annotations

import pytest

from tests.contract.rules.helpers import (
    Case,
    assert_case_fires,
    list_diff,
    prompt,
)

CASES: list[Case] = [
    (
        "prompt required argument added",
        "prompt_required_argument_added",
        "arguments.genre",
        True,
        False,
        lambda: list_diff("prompts", [prompt("p")], [prompt("p", {"name": "genre", "required": True})]),
    ),
    (
        "prompt optional argument added",
        "prompt_optional_argument_added",
        "arguments.genre",
        False,
        False,
        lambda: list_diff("prompts", [prompt("p")], [prompt("p", {"name": "genre"})]),
    ),
    (
        "prompt argument removed",
        "prompt_argument_removed",
        "arguments.genre",
        True,
        False,
        lambda: list_diff("prompts", [prompt("p", {"name": "genre"})], [prompt("p")]),
    ),
    (
        "prompt argument became required",
        "prompt_argument_became_required",
        "arguments.genre.required",
        True,
        False,
        lambda: list_diff(
            "prompts", [prompt("p", {"name": "genre"})], [prompt("p", {"name": "genre", "required": True})]
        ),
    ),
    (
        "prompt argument became optional",
        "prompt_argument_became_optional",
        "arguments.genre.required",
        False,
        False,
        lambda: list_diff(
            "prompts", [prompt("p", {"name": "genre", "required": True})], [prompt("p", {"name": "genre"})]
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_rule_triggers_with_its_grade(case: Case) -> None:
    assert_case_fires(case)
