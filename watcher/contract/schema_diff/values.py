"""Union members that are finite sets of values, compared as sets whatever their spelling.

`{type: string, enum: [a, b]}`, `anyOf: [{const: a}, {const: b}]` and `oneOf: [{enum: [a]}, {const: b}]`
accept the same two strings. When both sides spell their values as one `const` per member, the walker pairs
the members by value (and compares each member's own description); when the spellings differ (or only one
side has value members), each side's value members are merged here into one `{type, enum}` per JSON type of
the values, so that the walker compares value sets (and a string's enum with the other side's pattern in
view), and the members' own annotations are set beside them to be compared by value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from watcher.contract.schema_diff.canonical import canonical
from watcher.contract.schema_diff.shapes import covers_type, enum_values, json_type
from watcher.contract.schema_diff.vocabulary import ANNOTATIONS, IGNORED

Variants = dict[str, tuple[Any, tuple[str, ...]]]

_VALUE_KEYWORDS = frozenset({"type", "enum", "const"})


@dataclass(slots=True)
class ValueSets:
    """One side's variants after merging, and the annotations its value members carried, by value."""

    variants: Variants
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)


def finite_values(variant: Any) -> list[Any] | None:
    """The values a member accepts when it is only a finite set (type, enum, const and annotations); else None."""
    if not isinstance(variant, dict):
        return None
    keys = {k for k in variant if k not in ANNOTATIONS and k not in IGNORED and not k.startswith("x-")}
    if not keys <= _VALUE_KEYWORDS or not keys & {"enum", "const"}:
        return None
    listed = enum_values(variant) or []
    if "const" in variant and "enum" in variant:
        listed = [v for v in variant["enum"] if canonical(v) == canonical(variant["const"])]
    declared = variant.get("type")
    types = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else None
    kept: dict[str, Any] = {}
    for value in listed:
        if types is None or value_type(value) in types or (value_type(value) == "integer" and "number" in types):
            kept.setdefault(canonical(value), value)
    return list(kept.values())


def value_type(value: Any) -> str:
    """The JSON type of a value, a float with no fraction counting as an integer (as JSON Schema counts it)."""
    if isinstance(value, float) and value.is_integer():
        return "integer"
    return json_type(value)


def needs_merging(va: Variants, vb: Variants) -> bool:
    """Whether the value members must be merged to be compared: one side spells its values as one `const` per
    member and the other does not (an `enum` member, an enum-typed node, or no value member at all: then the
    const side's values meet the other side's keywords as one `enum`)."""
    const_a, const_b = (any(key.startswith("const:") for key in side) for side in (va, vb))
    if not (const_a or const_b):
        return False
    members = [(key, variant) for side in (va, vb) for key, (variant, _) in side.items()]
    by_enum = any(not key.startswith("const:") and finite_values(variant) is not None for key, variant in members)
    return by_enum or not (const_a and const_b)


def merge_values(variants: Variants) -> ValueSets:
    """Value members merged into one `{type, enum}` variant per JSON type (a type whose every value is
    listed, `null` or both booleans, as that type alone), the other members kept as they are."""
    kept: Variants = {}
    grouped: dict[str, list[Any]] = {}
    notes: dict[str, dict[str, Any]] = {}
    for key, (variant, stack) in variants.items():
        values = finite_values(variant)
        if values is None:
            kept[key] = (variant, stack)
            continue
        for value in values:
            grouped.setdefault(value_type(value), []).append(value)
        own = {k: v for k, v in variant.items() if k in ANNOTATIONS or k.startswith("x-")}
        if own and len(values) == 1:
            notes[canonical(values[0])] = own
    whole_types = {_whole_type(variant) for variant, _ in kept.values()} - {None}
    for type_name, values in grouped.items():
        if type_name in whole_types:
            continue  # another member accepts every value of this type: these values add nothing
        merged: dict[str, Any] = {"type": type_name}
        if not covers_type(values, type_name):
            merged["enum"] = values
        name = type_name if type_name not in kept else f"{type_name}:values"
        kept[name] = (merged, ())
    return ValueSets(kept, notes)


def _whole_type(variant: Any) -> str | None:
    """The type a member accepts every value of (`{type: T}` and annotations only), else None."""
    if not isinstance(variant, dict) or not isinstance(variant.get("type"), str):
        return None
    rest = {k for k in variant if k not in ANNOTATIONS and k not in IGNORED and not k.startswith("x-")}
    return variant["type"] if rest == {"type"} else None
