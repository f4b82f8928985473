"""Narrowing decided by containment — does the new schema accept every value the old one accepted? —
through unions (old contained in some branch), allOf, $ref/$defs, open objects and patterns."""

from __future__ import annotations

from typing import Any

from tests.contract.helpers import obj
from tests.contract.rules.helpers import STR, output_diff, schema_diff
from watcher.contract.patterns import pattern_direction
from watcher.contract.schema_diff import diff_schemas, narrows

OLD_FILTER = obj({"field": STR, "value": STR}, ["field", "value"], additionalProperties=False)


def _breaking(changes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(c["rule"], c["path"]) for c in changes if c["breaksClients"]]


# -- combinators -----------------------------------------------------------------------------------


def test_an_object_that_became_a_union_whose_first_branch_is_itself_is_no_narrowing() -> None:
    other = obj({"all": {"type": "array", "items": OLD_FILTER}}, ["all"], additionalProperties=False)
    for keyword in ("oneOf", "anyOf"):
        changes = schema_diff(obj({"filter": OLD_FILTER}), obj({"filter": {keyword: [OLD_FILTER, other]}}))
        assert _breaking(changes) == [], keyword
        assert [c["rule"] for c in changes] == ["type_widened"]


def test_the_containing_branch_is_found_whatever_its_position_or_key() -> None:
    first = obj({"id": {"type": "integer"}}, ["id"], additionalProperties=False, title="ById")
    old = obj({"q": {**STR, "maxLength": 50}}, ["q"])
    new = {"anyOf": [first, obj({"q": STR}, ["q"], title="ByQuery")]}
    assert not [f for f in diff_schemas(old, new) if narrows(f)]


def test_a_union_with_no_branch_containing_the_old_schema_still_narrows() -> None:
    new = {"oneOf": [obj({"field": STR}, ["field"], additionalProperties=False), {"type": "null"}]}
    changes = schema_diff(obj({"filter": OLD_FILTER}), obj({"filter": new}))
    assert _breaking(changes)


def test_an_old_union_member_dropped_still_narrows() -> None:
    changes = schema_diff(
        obj({"a": {"anyOf": [STR, {"type": "integer"}]}}),
        obj({"a": {"anyOf": [STR, {"type": "boolean"}]}}),
    )
    assert ("type_narrowed", "inputSchema.properties.a.anyOf") in _breaking(changes)


def test_all_of_members_that_each_accept_the_old_schema_widen() -> None:
    old = obj({"a": STR, "b": {"type": "integer"}}, ["a"])
    new = {"allOf": [obj({"a": STR}), obj({"b": {"type": "number"}})]}
    changes = schema_diff(old, new)
    assert _breaking(changes) == []


def test_an_all_of_member_that_rejects_old_values_is_breaking() -> None:
    old = obj({"a": STR})
    new = {"allOf": [obj({"a": STR}), obj({"a": STR}, ["a"])]}
    assert _breaking(schema_diff(old, new))


def test_ref_and_defs_are_followed_for_containment() -> None:
    old = {"$defs": {"F": OLD_FILTER}, **obj({"f": {"$ref": "#/$defs/F"}})}
    new = {
        "$defs": {"F": OLD_FILTER, "G": obj({"x": STR})},
        **obj({"f": {"anyOf": [{"$ref": "#/$defs/F"}, {"$ref": "#/$defs/G"}]}}),
    }
    assert _breaking(schema_diff(old, new)) == []


# -- open objects ----------------------------------------------------------------------------------


def test_a_property_dropped_while_the_nested_object_opened_up_breaks_no_call() -> None:
    old = obj({"options": obj({"depth": {"type": "integer"}, "lang": STR}, additionalProperties=False)})
    new = obj({"options": obj({"depth": {"type": "integer"}}, additionalProperties=True)})
    changes = schema_diff(old, new)
    assert _breaking(changes) == []
    assert {(c["rule"], c["grade"]) for c in changes} >= {
        ("parameter_ignored", "dangerous"),
        ("type_widened", "models"),
    }


def test_a_property_dropped_from_a_closed_object_is_breaking() -> None:
    old = obj({"options": obj({"depth": {"type": "integer"}, "lang": STR}, additionalProperties=False)})
    new = obj({"options": obj({"depth": {"type": "integer"}}, additionalProperties=False)})
    assert _breaking(schema_diff(old, new)) == [("parameter_removed", "inputSchema.properties.options.properties.lang")]


def test_a_property_dropped_where_unknown_keys_must_match_a_schema_is_breaking() -> None:
    old = obj({"a": STR, "n": {"type": "integer"}}, additionalProperties=STR)
    new = obj({"a": STR}, additionalProperties=STR)
    assert _breaking(schema_diff(old, new)) == [("parameter_removed", "inputSchema.properties.n")]


def test_an_output_property_dropped_from_an_open_object_still_breaks_readers() -> None:
    changes = output_diff(obj({"id": STR, "year": {"type": "integer"}}), obj({"id": STR}))
    assert _breaking(changes) == [("output_property_removed", "outputSchema.properties.year")]


# -- patterns --------------------------------------------------------------------------------------


def test_pattern_directions_by_automaton_inclusion() -> None:
    assert pattern_direction("^[a-z]+$", "^[a-z0-9-]+$") == "widened"
    assert pattern_direction("^[a-z0-9-]+$", "^[a-z]+$") == "narrowed"
    assert pattern_direction("^a$|^b$", "^(a|b)$") == "equivalent"
    assert pattern_direction("^x", "^y") == "changed"
    assert pattern_direction("abc", "^abc") == "narrowed"  # unanchored: anywhere in the string
    assert pattern_direction(r"^\d{4}-\d{2}$", r"^\d{4}-\d{2}(-\d{2})?$") == "widened"


def test_patterns_outside_what_the_automata_can_read_are_unknown_never_narrowed() -> None:
    for old, new in ((r"^(?=.*\d)\w+$", r"^\w+$"), (r"^(a)\1$", "^aa$"), (r"^\p{L}+$", "^[a-z]+$"), ("a^b", "ab")):
        assert pattern_direction(old, new) == "unknown", (old, new)
    changes = schema_diff(obj({"a": {**STR, "pattern": r"^(?=.*\d)\w+$"}}), obj({"a": {**STR, "pattern": r"^\w+$"}}))
    assert [(c["rule"], c["grade"], c["breaksClients"]) for c in changes] == [
        ("pattern_changed_unknown", "dangerous", False)
    ]


def test_a_widened_pattern_is_not_called_narrowed() -> None:
    changes = schema_diff(
        obj({"id": {**STR, "pattern": "^[A-Za-z0-9_]+$"}}), obj({"id": {**STR, "pattern": "^[A-Za-z0-9_.:-]+$"}})
    )
    assert [(c["rule"], c["breaksClients"]) for c in changes] == [("type_widened", False)]


def test_a_record_s_property_names_of_type_string_constrain_nothing() -> None:
    record = {"type": "object", "additionalProperties": {}}
    changes = schema_diff(obj({"schema": record}), obj({"schema": {**record, "propertyNames": {"type": "string"}}}))
    assert changes == []


def test_an_optional_parameter_made_required_with_a_default_breaks_no_call() -> None:
    changes = schema_diff(obj({"n": {"type": "integer"}}), obj({"n": {"type": "integer", "default": 1}}, ["n"]))
    assert [(c["rule"], c["breaksClients"]) for c in changes if c["rule"] != "default_changed"] == [
        ("required_parameter_with_default", False)
    ]
