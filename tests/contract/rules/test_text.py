"""Family `text`: what the model reads (descriptions, titles, instructions, annotations).
Each rule fires on a minimal before/after pair, with its grade."""

from __future__ import annotations

import pytest

from tests.contract.helpers import obj, tool
from tests.contract.rules.helpers import (
    STR,
    Case,
    assert_case_fires,
    list_diff,
    prompt,
    schema_diff,
    server_diff,
    tools_diff,
)

CASES: list[Case] = [
    (
        "tool description",
        "description_changed",
        "description",
        False,
        True,
        lambda: tools_diff(
            [tool("a", description="Convert units")], [tool("a", description="Convert units of length")]
        ),
    ),
    (
        "parameter description",
        "description_changed",
        "inputSchema.properties.q.description",
        False,
        True,
        lambda: schema_diff(obj({"q": {**STR, "description": "query"}}), obj({"q": {**STR, "description": "search"}})),
    ),
    (
        "prompt description",
        "description_changed",
        "description",
        False,
        True,
        lambda: list_diff("prompts", [prompt("p", description="a")], [prompt("p", description="b")]),
    ),
    (
        "title changed",
        "title_changed",
        "title",
        False,
        True,
        lambda: tools_diff([tool("a", title="Find")], [tool("a", title="Find a book")]),
    ),
    (
        "instructions changed",
        "instructions_changed",
        "instructions",
        False,
        True,
        lambda: server_diff({"instructions": "Use find_book."}, {"instructions": "Prefer find_book_by_author."}),
    ),
    (
        "annotations changed",
        "annotations_changed",
        "annotations.destructiveHint",
        False,
        True,
        lambda: tools_diff(
            [tool("a", annotations={"readOnlyHint": False, "destructiveHint": False})],
            [tool("a", annotations={"readOnlyHint": False, "destructiveHint": True})],
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_rule_triggers_with_its_grade(case: Case) -> None:
    assert_case_fires(case)
