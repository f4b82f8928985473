"""Family `output_schema`: a tool's outputSchema (what structuredContent a client parses).
Each rule fires on a minimal before/after pair, with its grade."""

from __future__ import annotations

import pytest

from tests.contract.helpers import obj
from tests.contract.rules.helpers import (
    INT,
    NULLABLE_STR,
    STR,
    Case,
    assert_case_fires,
    output_diff,
)

CASES: list[Case] = [
    (
        "output property removed",
        "output_property_removed",
        "outputSchema.properties.year",
        True,
        False,
        lambda: output_diff(obj({"isbn": STR, "year": INT}), obj({"isbn": STR})),
    ),
    (
        "output property added",
        "output_property_added",
        "outputSchema.properties.year",
        False,
        False,
        lambda: output_diff(obj({"isbn": STR}, ["isbn"]), obj({"isbn": STR, "year": INT}, ["isbn", "year"])),
    ),
    (
        "output type changed",
        "output_type_changed",
        "outputSchema.properties.assignee.type",
        True,
        False,
        lambda: output_diff(obj({"assignee": STR}), obj({"assignee": {"type": "object"}})),
    ),
    (
        "output may be null",
        "output_type_changed",
        "outputSchema.properties.assignee.anyOf",
        True,
        False,
        lambda: output_diff(obj({"assignee": STR}), obj({"assignee": NULLABLE_STR})),
    ),
    (
        "output format replaced",
        "output_format_changed",
        "outputSchema.properties.link.format",
        False,
        False,
        lambda: output_diff(obj({"link": {**STR, "format": "uri"}}), obj({"link": {**STR, "format": "email"}})),
    ),
    (
        "output property left required",
        "output_property_no_longer_required",
        "outputSchema.required",
        True,
        False,
        lambda: output_diff(obj({"isbn": STR}, ["isbn"]), obj({"isbn": STR}, [])),
    ),
    (
        "output enum value added",
        "output_enum_value_added",
        "outputSchema.properties.state.enum",
        False,
        False,
        lambda: output_diff(
            obj({"state": {**STR, "enum": ["open"]}}), obj({"state": {**STR, "enum": ["open", "hold"]}})
        ),
    ),
    (
        "output became stricter",
        "output_type_narrowed",
        "outputSchema.properties.n.maximum",
        False,
        False,
        lambda: output_diff(obj({"n": INT}), obj({"n": {**INT, "maximum": 9}})),
    ),
    (
        "output bound relaxed",
        "output_type_widened",
        "outputSchema.properties.code.maxLength",
        False,
        False,
        lambda: output_diff(obj({"code": {**STR, "maxLength": 4}}), obj({"code": {**STR, "maxLength": 8}})),
    ),
    (
        "output schema removed",
        "output_schema_removed",
        "outputSchema",
        True,
        False,
        lambda: output_diff(obj({"isbn": STR}), None),
    ),
    (
        "output schema added",
        "output_schema_added",
        "outputSchema",
        False,
        False,
        lambda: output_diff(None, obj({"isbn": STR})),
    ),
    (
        "output description changed",
        "output_annotation_changed",
        "outputSchema.properties.isbn.description",
        False,
        False,
        lambda: output_diff(
            obj({"isbn": {**STR, "description": "ISBN-10"}}), obj({"isbn": {**STR, "description": "ISBN-13"}})
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_rule_triggers_with_its_grade(case: Case) -> None:
    assert_case_fires(case)
