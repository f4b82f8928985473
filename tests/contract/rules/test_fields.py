"""Family `fields`: any other field of an entry.
Each rule fires on a minimal before/after pair, with its grade."""

from __future__ import annotations

import pytest

from tests.contract.helpers import tool
from tests.contract.rules.helpers import (
    Case,
    assert_case_fires,
    tools_diff,
)

CASES: list[Case] = [
    (
        "icons changed",
        "field_changed",
        "icons",
        False,
        False,
        lambda: tools_diff([tool("a")], [tool("a", icons=[{"src": "https://example.org/a.png"}])]),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_rule_triggers_with_its_grade(case: Case) -> None:
    assert_case_fires(case)
