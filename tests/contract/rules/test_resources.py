"""Family `resources`: resources and resource templates.
Each rule fires on a minimal before/after pair, with its grade."""

from __future__ import annotations

import pytest

from tests.contract.rules.helpers import (
    Case,
    assert_case_fires,
    list_diff,
)

CASES: list[Case] = [
    (
        "resource uri changed",
        "uri_changed",
        "uri",
        True,
        False,
        lambda: list_diff(
            "resources", [{"uri": "lib://catalog", "name": "catalog"}], [{"uri": "lib://v2/catalog", "name": "catalog"}]
        ),
    ),
    (
        "template changed",
        "uri_template_changed",
        "uriTemplate",
        True,
        False,
        lambda: list_diff(
            "resource-templates",
            [{"uriTemplate": "lib://books/{isbn}", "name": "book"}],
            [{"uriTemplate": "lib://books/{id}", "name": "book"}],
        ),
    ),
    (
        "mime type changed",
        "mime_type_changed",
        "mimeType",
        True,
        False,
        lambda: list_diff(
            "resources",
            [{"uri": "lib://c", "name": "c", "mimeType": "application/json"}],
            [{"uri": "lib://c", "name": "c", "mimeType": "text/csv"}],
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_rule_triggers_with_its_grade(case: Case) -> None:
    assert_case_fires(case)


def test_moved_resource_is_one_uri_change_not_remove_and_add() -> None:
    changes = list_diff("resources", [{"uri": "lib://a", "name": "catalog"}], [{"uri": "lib://b", "name": "catalog"}])
    assert [c["rule"] for c in changes] == ["uri_changed"]
