"""Family `errors`: how the server answers deliberate mistakes.
Each rule fires on a minimal before/after pair, with its grade."""

from __future__ import annotations

import pytest

from tests.contract.rules.helpers import (
    Case,
    assert_case_fires,
    errors_diff,
)

CASES: list[Case] = [
    (
        "resource-not-found code changed",
        "error_code_changed",
        "unknown_resource.code",
        True,
        False,
        lambda: errors_diff(
            {"unknown_resource": {"mode": "jsonrpc_error", "code": -32002}},
            {"unknown_resource": {"mode": "jsonrpc_error", "code": -32602}},
        ),
    ),
    (
        "unknown tool became a protocol error",
        "error_mode_changed",
        "unknown_tool.mode",
        True,
        False,
        lambda: errors_diff(
            {"unknown_tool": {"mode": "tool_error"}}, {"unknown_tool": {"mode": "jsonrpc_error", "code": -32602}}
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_rule_triggers_with_its_grade(case: Case) -> None:
    assert_case_fires(case)


def test_skipped_error_probe_is_not_compared() -> None:
    changes = errors_diff(
        {"missing_required_argument": {"mode": "skipped"}}, {"missing_required_argument": {"mode": "tool_error"}}
    )
    assert changes == []
