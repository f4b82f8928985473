"""The accepted-set comparisons of the schema diff, unit by unit: the strings a node accepts (schema_diff/strings),
value members merged across spellings (schema_diff/values), and the walker re-judging string keywords with the
others in view. The generators' own shapes are tested in test_generated_rewrites.py."""

from __future__ import annotations

from typing import Any

import pytest

from watcher.contract.patterns import language
from watcher.contract.schema_diff import diff_schemas
from watcher.contract.schema_diff.strings import (
    FORMAT_SUPERSETS,
    has_length_between,
    is_string_node,
    refuses_none,
    string_set,
)
from watcher.contract.schema_diff.values import finite_values, merge_values, needs_merging

STR = {"type": "string"}


def _facts(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str | None, str | None]]:
    return [(f.keyword, f.direction) for f in diff_schemas(before, after)]


# -- the strings a node accepts ---------------------------------------------------------------------

VALID_INSTANCES = {
    "uri": ["a:", "https://example.com/a?b#c", "urn:isbn:0451450523", "mailto:someone@example.com"],
    "iri": ["https://例え.jp/パス", "a:"],
    "email": ["a@b", '"quoted@at"@example.com', "first.last@example.co.uk"],
    "idn-email": ["ユーザー@例え.jp"],
    "date": ["2026-12-01", "0000-01-01"],
    "date-time": ["2026-12-01T12:00:00Z", "2026-12-01t12:00:00.125+01:00"],
    "time": ["12:00:00Z", "23:59:60.5-08:00"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000"],
    "ipv4": ["0.0.0.0", "192.168.100.200"],
    "ipv6": ["::", "::1", "2001:db8::8a2e:370:7334", "::ffff:192.0.2.1"],
    "hostname": ["a", "example.com", "xn--bcher-kva.example."],
    "duration": ["P1D", "PT1S", "P3Y6M4DT12H30M5S", "P1W"],
}


def test_each_format_is_read_as_a_superset_of_what_it_names() -> None:
    assert set(VALID_INSTANCES) == set(FORMAT_SUPERSETS)
    for name, instances in VALID_INSTANCES.items():
        automaton = language(FORMAT_SUPERSETS[name])
        assert automaton is not None, name
        for instance in instances:
            assert automaton.accepts(instance), (name, instance)
        assert not automaton.accepts(""), name


def test_a_format_that_admits_the_empty_string_or_is_unknown_is_read_as_every_string() -> None:
    for name in ("uri-reference", "json-pointer", "regex", "x-custom"):
        assert string_set({**STR, "format": name}).automaton is None


def test_lengths_of_an_automaton_are_found_past_its_cycle() -> None:
    pairs = language("^(ab)*$")
    assert pairs is not None
    assert has_length_between(pairs, 3, 3) is False
    assert has_length_between(pairs, 3, 4) is True
    assert has_length_between(pairs, 10_001, 10_001) is False
    assert has_length_between(pairs, 10_001, None) is True
    assert has_length_between(pairs, 0, 0) is True


@pytest.mark.parametrize(
    ("node", "keyword", "other", "expected"),
    [
        ({**STR, "pattern": "^[a-z]+$"}, "minLength", {"minLength": 1}, True),
        ({**STR, "pattern": "^[a-z]*$"}, "minLength", {"minLength": 1}, False),
        ({**STR, "pattern": "a"}, "minLength", {"minLength": 1}, True),  # unanchored: "a" somewhere
        ({**STR, "pattern": "a"}, "minLength", {"minLength": 2}, False),
        ({**STR, "format": "uri"}, "minLength", {"minLength": 2}, True),
        ({**STR, "format": "uri"}, "minLength", {"minLength": 3}, False),
        ({**STR, "format": "date"}, "maxLength", {"maxLength": 10}, True),
        ({**STR, "pattern": "^[A-Z]{2,8}$"}, "maxLength", {"maxLength": 4}, False),
        ({**STR, "pattern": "^(fast|exact)$"}, "enum", {"enum": ["fast", "exact"]}, True),
        ({**STR, "pattern": "^(fast|exact)$"}, "enum", {"enum": ["fast"]}, False),
        ({**STR, "enum": ["fast", "exact"]}, "pattern", {"pattern": "^[a-z]+$"}, True),
        ({**STR, "enum": ["fast", "e x"]}, "pattern", {"pattern": "^[a-z]+$"}, False),
        ({**STR, "enum": ["fast", "exact"], "minLength": 5}, "const", {"const": "exact"}, True),  # "fast" refused
        ({**STR, "minLength": 1}, "minLength", {"minLength": 1}, True),
        (STR, "minLength", {"minLength": 1}, False),
        # Undecidable here: never said to refuse nothing.
        ({**STR, "pattern": "^(?=a)[a-z]+$"}, "minLength", {"minLength": 1}, False),
        ({**STR, "pattern": "^[a-z]+$"}, "pattern", {"pattern": "^(?!x)[a-z]+$"}, False),
        ({**STR, "pattern": "^[a-z]+$"}, "maxLength", {"maxLength": 10_000}, False),
    ],
)
def test_whether_a_keyword_refuses_none_of_a_nodes_strings(
    node: dict[str, Any], keyword: str, other: dict[str, Any], expected: bool
) -> None:
    assert refuses_none(string_set(node), keyword, other) is expected


def test_a_string_node_is_typed_string_or_lists_only_strings() -> None:
    assert is_string_node(STR) and is_string_node({"enum": ["a", "b"]}) and is_string_node({"const": "a"})
    assert not is_string_node({"enum": ["a", 1]}) and not is_string_node({"type": "integer", "enum": [1]})


# -- value members ----------------------------------------------------------------------------------


def test_a_value_member_keeps_the_values_its_type_admits() -> None:
    assert finite_values({"type": "string", "enum": ["a", 1, "a"]}) == ["a"]
    assert finite_values({"type": "number", "enum": [1, 2.5, "x"]}) == [1, 2.5]
    assert finite_values({"const": "a", "enum": ["a", "b"]}) == ["a"]
    assert finite_values({"const": "a", "description": "The a."}) == ["a"]
    assert finite_values({"type": "string", "enum": ["a"], "minLength": 2}) is None
    assert finite_values({"type": "string"}) is None


def test_const_members_merge_only_against_another_spelling() -> None:
    consts = {"const:a": ({"const": "a"}, ()), "const:b": ({"const": "b"}, ())}
    enum = {"string": ({"type": "string", "enum": ["a", "b"]}, ())}
    plain = {"string": ({"type": "string", "pattern": "^[ab]$"}, ())}
    assert not needs_merging(consts, consts)
    assert needs_merging(consts, enum) and needs_merging(enum, consts)
    assert needs_merging(consts, plain)
    assert not needs_merging(enum, plain)


def test_merged_members_are_one_enum_per_json_type_and_keep_their_notes() -> None:
    merged = merge_values(
        {
            "const:a": ({"const": "a", "description": "The a."}, ()),
            "const:1": ({"const": 1}, ()),
            "null": ({"type": "null"}, ()),
            "const:null": ({"const": None}, ()),
            "object": ({"type": "object"}, ()),
        }
    )
    variants = {key: variant for key, (variant, _) in merged.variants.items()}
    assert variants == {
        "string": {"type": "string", "enum": ["a"]},
        "integer": {"type": "integer", "enum": [1]},
        "null": {"type": "null"},
        "object": {"type": "object"},
    }
    assert merged.notes == {'"a"': {"description": "The a."}}


# -- the walker -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ({**STR, "enum": ["a", "b"]}, {"anyOf": [{"const": "a"}, {"const": "b"}]}),
        ({**STR, "enum": ["a", "b"]}, {"oneOf": [{"const": "b"}, {"enum": ["a"]}]}),
        ({"type": ["string", "null"], "enum": ["a", None]}, {"anyOf": [{"const": "a"}, {"type": "null"}]}),
        ({**STR, "const": "a"}, {**STR, "enum": ["a"]}),
        ({**STR, "pattern": "^(a|b)$"}, {"anyOf": [{"const": "a"}, {"const": "b"}]}),
        ({**STR, "pattern": "^[a-z]{1,5}$"}, {**STR, "pattern": "^[a-z]{1,5}$", "minLength": 1, "maxLength": 10**9}),
        ({"type": "null", "const": None}, {"type": "null"}),
        ({"anyOf": [{"const": "a"}, {"type": "null"}]}, {"anyOf": [{"const": "a"}, {"const": None}]}),
        ({**STR, "enum": ["ab", "cd"]}, {**STR, "enum": ["ab", "cd"], "minLength": 2, "maxLength": 2}),
        ({**STR, "format": "uri"}, {**STR, "format": "uri", "minLength": 2}),
    ],
)
def test_rewrites_of_the_same_accepted_set_are_no_facts(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert _facts(before, after) == []
    assert _facts(after, before) == []


def test_a_real_narrowing_inside_a_rewrite_is_still_a_narrowing() -> None:
    assert ("enum", "narrowed") in _facts({**STR, "enum": ["a", "b", "c"]}, {"anyOf": [{"const": "a"}, {"const": "b"}]})
    assert _facts({**STR, "pattern": "^[a-z]*$"}, {**STR, "pattern": "^[a-z]*$", "minLength": 1}) == [
        ("minLength", "narrowed")
    ]
    assert _facts({**STR, "format": "uri"}, {**STR, "minLength": 3}) == [
        ("minLength", "narrowed"),
        ("format", "widened"),
    ]
    # Any string is longer than any bound: a huge maxLength under an open pattern still narrows.
    assert _facts({**STR, "pattern": "^[a-z]+$"}, {**STR, "pattern": "^[a-z]+$", "maxLength": 10**9}) == [
        ("maxLength", "narrowed")
    ]
    # A pattern the old enum already met, beside a value removed: only the removal narrows.
    assert _facts({**STR, "enum": ["a", "b"]}, {**STR, "enum": ["a"], "pattern": "^[a-z]$"}) == [("enum", "narrowed")]


def test_a_changed_pattern_that_the_enum_makes_moot_one_way_keeps_the_other() -> None:
    # Old: only "ab" passes both enum and pattern; the new pattern admits "ab" too, and more: a widening only.
    before = {**STR, "enum": ["ab", "zz"], "pattern": "^a"}
    after = {**STR, "enum": ["ab", "zz"], "pattern": "^[a-z]"}
    assert _facts(before, after) == [("pattern", "widened")]


def test_member_descriptions_merged_into_a_value_set_are_compared_by_value() -> None:
    facts = diff_schemas(
        {**STR, "enum": ["a", "b"]}, {"oneOf": [{"const": "a", "description": "The a."}, {"enum": ["b"]}]}
    )
    assert [(f.kind, f.path, f.after) for f in facts] == [("annotation", 'oneOf[const:"a"].description', "The a.")]
