"""Family `input_schema`: a tool's inputSchema (what a call may send).
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
    schema_diff,
)

CASES: list[Case] = [
    (
        "integer exclusive bound spelled inclusive",
        "bound_rewritten",
        "inputSchema.properties.n.bounds",
        False,
        False,
        lambda: schema_diff(
            obj({"n": {"type": "integer", "exclusiveMaximum": 10}}), obj({"n": {"type": "integer", "maximum": 9}})
        ),
    ),
    (
        "required parameter added",
        "required_parameter_added",
        "inputSchema.required",
        True,
        True,
        lambda: schema_diff(obj({"title": STR}, ["title"]), obj({"title": STR, "author": STR}, ["title", "author"])),
    ),
    (
        "required parameter added with a default (zod 4 output-mode schema)",
        "required_parameter_with_default",
        "inputSchema.required",
        False,
        True,
        lambda: schema_diff(
            obj({"title": STR}, ["title"]),
            obj({"title": STR, "level": {**STR, "default": "info"}}, ["title", "level"]),
        ),
    ),
    (
        "optional parameter added",
        "optional_parameter_added",
        "inputSchema.properties.language",
        False,
        True,
        lambda: schema_diff(obj({"title": STR}), obj({"title": STR, "language": {**STR, "default": "en"}})),
    ),
    (
        "parameter removed",
        "parameter_removed",
        "inputSchema.properties.language",
        True,
        True,
        lambda: schema_diff(
            obj({"title": STR, "language": STR}, additionalProperties=False),
            obj({"title": STR}, additionalProperties=False),
        ),
    ),
    (
        "parameter dropped where unknown keys are allowed",
        "parameter_ignored",
        "inputSchema.properties.language",
        False,
        True,
        lambda: schema_diff(obj({"title": STR, "language": STR}), obj({"title": STR})),
    ),
    (
        "parameter became required",
        "parameter_became_required",
        "inputSchema.required",
        True,
        True,
        lambda: schema_diff(obj({"a": STR, "b": STR}, ["a"]), obj({"a": STR, "b": STR}, ["a", "b"])),
    ),
    (
        "parameter became optional",
        "parameter_became_optional",
        "inputSchema.required",
        False,
        True,
        lambda: schema_diff(obj({"a": STR, "b": STR}, ["a", "b"]), obj({"a": STR, "b": STR}, ["a"])),
    ),
    (
        "type changed",
        "type_changed",
        "inputSchema.properties.a.type",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {"type": "object"}})),
    ),
    (
        "enum added",
        "type_narrowed",
        "inputSchema.properties.a.enum",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {**STR, "enum": ["x", "y"]}})),
    ),
    (
        "enum value removed",
        "type_narrowed",
        "inputSchema.properties.a.enum",
        True,
        True,
        lambda: schema_diff(obj({"a": {**STR, "enum": ["x", "y"]}}), obj({"a": {**STR, "enum": ["x"]}})),
    ),
    (
        "maximum lowered",
        "type_narrowed",
        "inputSchema.properties.n.maximum",
        True,
        True,
        lambda: schema_diff(obj({"n": {**INT, "maximum": 100}}), obj({"n": {**INT, "maximum": 10}})),
    ),
    (
        "minimum raised",
        "type_narrowed",
        "inputSchema.properties.n.minimum",
        True,
        True,
        lambda: schema_diff(obj({"n": {**INT, "minimum": 0}}), obj({"n": {**INT, "minimum": 1}})),
    ),
    (
        "maxLength tightened",
        "type_narrowed",
        "inputSchema.properties.a.maxLength",
        True,
        True,
        lambda: schema_diff(obj({"a": {**STR, "maxLength": 80}}), obj({"a": {**STR, "maxLength": 40}})),
    ),
    (
        "minLength tightened",
        "type_narrowed",
        "inputSchema.properties.a.minLength",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {**STR, "minLength": 3}})),
    ),
    (
        "pattern added",
        "type_narrowed",
        "inputSchema.properties.a.pattern",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {**STR, "pattern": "^[0-9-]+$"}})),
    ),
    (
        "pattern narrowed (new language inside the old)",
        "type_narrowed",
        "inputSchema.properties.a.pattern",
        True,
        True,
        lambda: schema_diff(obj({"a": {**STR, "pattern": "^[a-z]+$"}}), obj({"a": {**STR, "pattern": "^[a-z]{1,8}$"}})),
    ),
    (
        "pattern changed both ways",
        "constraint_changed",
        "inputSchema.properties.a.pattern",
        True,
        True,
        lambda: schema_diff(obj({"a": {**STR, "pattern": "^a"}}), obj({"a": {**STR, "pattern": "^b"}})),
    ),
    (
        "pattern widened (old language inside the new)",
        "type_widened",
        "inputSchema.properties.a.pattern",
        False,
        True,
        lambda: schema_diff(obj({"a": {**STR, "pattern": "^[a-z]+$"}}), obj({"a": {**STR, "pattern": "^[a-z0-9_]+$"}})),
    ),
    (
        "pattern the automata cannot read",
        "pattern_changed_unknown",
        "inputSchema.properties.a.pattern",
        False,
        True,
        lambda: schema_diff(
            obj({"a": {**STR, "pattern": "^(?!x)[a-z]+$"}}), obj({"a": {**STR, "pattern": "^[a-z]+$"}})
        ),
    ),
    (
        "pattern spelled differently, same strings",
        "pattern_rewritten",
        "inputSchema.properties.a.pattern",
        False,
        False,
        lambda: schema_diff(
            obj({"a": {**STR, "pattern": "^[0-9]+$"}}), obj({"a": {**STR, "pattern": "^[0-9][0-9]*$"}})
        ),
    ),
    (
        "format added (whether the server enforces it cannot be read)",
        "format_changed",
        "inputSchema.properties.a.format",
        False,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {**STR, "format": "date"}})),
    ),
    (
        "additionalProperties false added",
        "type_narrowed",
        "inputSchema.additionalProperties",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": STR}, additionalProperties=False)),
    ),
    (
        "items narrowed",
        "type_narrowed",
        "inputSchema.properties.tags.items.maxLength",
        True,
        True,
        lambda: schema_diff(
            obj({"tags": {"type": "array", "items": STR}}),
            obj({"tags": {"type": "array", "items": {**STR, "maxLength": 5}}}),
        ),
    ),
    (
        "null no longer accepted",
        "type_narrowed",
        "inputSchema.properties.a.anyOf",
        True,
        True,
        lambda: schema_diff(obj({"a": NULLABLE_STR}), obj({"a": STR})),
    ),
    (
        "enum value added",
        "type_widened",
        "inputSchema.properties.a.enum",
        False,
        True,
        lambda: schema_diff(obj({"a": {**STR, "enum": ["x"]}}), obj({"a": {**STR, "enum": ["x", "y"]}})),
    ),
    (
        "integer to number",
        "type_widened",
        "inputSchema.properties.n.type",
        False,
        True,
        lambda: schema_diff(obj({"n": INT}), obj({"n": {"type": "number"}})),
    ),
    (
        "null accepted",
        "type_widened",
        "inputSchema.properties.a.anyOf",
        False,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": NULLABLE_STR})),
    ),
    (
        "default changed",
        "default_changed",
        "inputSchema.properties.lang.default",
        False,
        True,
        lambda: schema_diff(obj({"lang": {**STR, "default": "en"}}), obj({"lang": {**STR, "default": "de"}})),
    ),
    (
        "constraint without direction",
        "constraint_changed",
        "inputSchema.properties.a.not",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {**STR, "not": {"const": ""}}})),
    ),
    (
        "examples changed",
        "schema_annotation_changed",
        "inputSchema.properties.a.examples",
        False,
        True,
        lambda: schema_diff(obj({"a": {**STR, "examples": ["x"]}}), obj({"a": {**STR, "examples": ["y"]}})),
    ),
    (
        "x-mcp-header on an object property",
        "x_mcp_header_invalid",
        "inputSchema",
        True,
        True,
        lambda: schema_diff(
            obj({"filter": {"type": "object"}}), obj({"filter": {"type": "object", "x-mcp-header": "Filter"}})
        ),
    ),
    (
        "x-mcp-header renamed",
        "x_mcp_header_changed",
        "inputSchema.properties.region.x-mcp-header",
        False,
        False,
        lambda: schema_diff(
            obj({"region": {**STR, "x-mcp-header": "Region"}}), obj({"region": {**STR, "x-mcp-header": "Zone"}})
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_rule_triggers_with_its_grade(case: Case) -> None:
    assert_case_fires(case)


def test_required_parameter_added_reports_the_required_lists_once() -> None:
    changes = schema_diff(
        obj({"project": STR, "title": STR}, ["project", "title"]),
        obj({"project": STR, "title": STR, "priority": INT}, ["project", "title", "priority"]),
    )
    assert [(c["kind"], c["before"], c["after"]) for c in changes] == [
        ("required_parameter_added", ["project", "title"], ["project", "title", "priority"])
    ]
