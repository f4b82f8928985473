"""The structural JSON Schema diff: what is not a change, $ref/$defs, unions, nesting, paths."""

from __future__ import annotations

from typing import Any

import pytest

from watcher.contract.schema_diff import diff_schemas

STR = {"type": "string"}

EQUIVALENT: list[tuple[str, Any, Any]] = [
    (
        "titles added by a generator",
        {"type": "object", "properties": {"a": STR}},
        {"type": "object", "title": "fnArguments", "properties": {"a": {**STR, "title": "A"}}},
    ),
    ("key order", {"type": "string", "maxLength": 3}, {"maxLength": 3, "type": "string"}),
    (
        "required order",
        {"type": "object", "properties": {"a": STR, "b": STR}, "required": ["a", "b"]},
        {"type": "object", "properties": {"b": STR, "a": STR}, "required": ["b", "a"]},
    ),
    ("enum order", {"type": "string", "enum": ["x", "y"]}, {"type": "string", "enum": ["y", "x"]}),
    (
        "union order",
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"anyOf": [{"type": "null"}, {"type": "string"}]},
    ),
    (
        "type list vs anyOf nullable",
        {"type": ["string", "null"], "maxLength": 5},
        {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]},
    ),
    (
        "$ref vs inline",
        {
            "type": "object",
            "properties": {"addr": {"$ref": "#/$defs/Address"}},
            "$defs": {"Address": {"type": "object", "title": "Address", "properties": {"city": STR}}},
        },
        {"type": "object", "properties": {"addr": {"type": "object", "properties": {"city": STR}}}},
    ),
    ("$schema and $id", {"$schema": "https://json-schema.org/draft/2020-12/schema", **STR}, STR),
    ("single-member allOf", {"allOf": [{"$ref": "#/$defs/S"}], "$defs": {"S": STR}}, STR),
]


@pytest.mark.parametrize(("before", "after"), [c[1:] for c in EQUIVALENT], ids=[c[0] for c in EQUIVALENT])
def test_not_a_change(before: Any, after: Any) -> None:
    assert diff_schemas(before, after) == []


def test_change_inside_a_ref_is_found_at_the_logical_path() -> None:
    def schema(city: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"shipping": {"$ref": "#/$defs/Address"}},
            "$defs": {"Address": {"type": "object", "properties": {"city": city}}},
        }

    facts = diff_schemas(schema(STR), schema({"type": "string", "maxLength": 20}))
    assert [(f.kind, f.path, f.direction) for f in facts] == [
        ("constraint", "properties.shipping.properties.city.maxLength", "narrowed")
    ]


def test_recursive_schema_terminates_and_compares() -> None:
    def tree(leaf_type: str) -> dict[str, Any]:
        return {
            "$ref": "#/$defs/Node",
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": leaf_type},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    },
                }
            },
        }

    assert diff_schemas(tree("string"), tree("string")) == []
    facts = diff_schemas(tree("string"), tree("integer"))
    assert [(f.path, f.before, f.after) for f in facts] == [("properties.value.type", "string", "integer")]


def test_discriminated_union_members_matched_by_ref_name() -> None:
    def schema(dog_props: dict[str, Any]) -> dict[str, Any]:
        return {
            "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
            "$defs": {
                "Cat": {"type": "object", "properties": {"meows": {"type": "boolean"}}},
                "Dog": {"type": "object", "properties": dog_props},
            },
        }

    facts = diff_schemas(schema({"barks": {"type": "boolean"}}), schema({"barks": {"type": "boolean"}, "name": STR}))
    assert [(f.kind, f.path) for f in facts] == [("property_added", "oneOf[object:Dog].properties.name")]


def test_union_member_change_inside_nullable() -> None:
    facts = diff_schemas(
        {"anyOf": [{"type": "string", "maxLength": 10}, {"type": "null"}]},
        {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]},
    )
    assert [(f.path, f.direction) for f in facts] == [("anyOf[string].maxLength", "narrowed")]


def test_const_union_behaves_like_an_enum() -> None:
    facts = diff_schemas(
        {"anyOf": [{"const": "a"}, {"const": "b"}]}, {"anyOf": [{"const": "a"}, {"const": "b"}, {"const": "c"}]}
    )
    assert [(f.kind, f.direction, f.names) for f in facts] == [("enum", "widened", ('const:"c"',))]


def test_nested_arrays_of_objects_and_property_names_with_dots() -> None:
    def schema(required: list[str]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "line.items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"sku": STR, "qty": {"type": "integer"}},
                        "required": required,
                    },
                }
            },
        }

    facts = diff_schemas(schema(["sku"]), schema(["sku", "qty"]))
    assert [(f.kind, f.path, f.names) for f in facts] == [
        ("became_required", 'properties["line.items"].items.required', ("qty",))
    ]


def test_const_true_is_not_const_one() -> None:
    facts = diff_schemas({"const": True}, {"const": 1})
    assert facts and facts[0].kind in ("type", "enum")


@pytest.mark.parametrize(
    ("before", "after", "direction"),
    [
        ({"type": "number", "multipleOf": 2}, {"type": "number", "multipleOf": 4}, "narrowed"),
        ({"type": "number", "multipleOf": 4}, {"type": "number", "multipleOf": 2}, "widened"),
        ({"type": "array", "items": STR}, {"type": "array", "items": STR, "uniqueItems": True}, "narrowed"),
        ({"type": "array", "maxItems": 3}, {"type": "array"}, "widened"),
        ({"type": "object", "additionalProperties": False}, {"type": "object"}, "widened"),
        (
            {"type": "object", "additionalProperties": STR},
            {"type": "object", "additionalProperties": False},
            "narrowed",
        ),
        ({}, STR, "narrowed"),
        (STR, True, "widened"),
    ],
)
def test_constraint_directions(before: Any, after: Any, direction: str) -> None:
    facts = diff_schemas(before, after)
    assert [f.direction for f in facts] == [direction]
