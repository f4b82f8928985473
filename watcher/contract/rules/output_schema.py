"""Family `output_schema`: a tool's `outputSchema`, i.e. what `structuredContent` a client parses.

The direction flips against input: a narrower output is safe, a wider one may surprise a client
that parses the old shape. Models rarely see output schemas, so these rules do not affect models.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules.base import Rule, join_path, make_change
from watcher.contract.rules.input_schema import hint_for
from watcher.contract.schema_diff import Fact, diff_schemas, strip_titles

F = "output_schema"
OUTPUT_PROPERTY_REMOVED = Rule(
    "output_property_removed", F, "An output property is gone (or renamed): clients reading it fail.", True, False
)
OUTPUT_PROPERTY_ADDED = Rule(
    "output_property_added",
    F,
    "A new output property: safe for tolerant clients (those that ignore unknown fields).",
    False,
    False,
)
OUTPUT_TYPE_CHANGED = Rule(
    "output_type_changed",
    F,
    "An output value's type changed or widened to a new type (string → object, integer → number, null "
    "allowed…): clients parse the old type and fail or misread.",
    True,
    False,
)
OUTPUT_PROPERTY_NO_LONGER_REQUIRED = Rule(
    "output_property_no_longer_required",
    F,
    "An output property left `required`: clients that rely on it may find it missing.",
    True,
    False,
)
OUTPUT_ENUM_VALUE_ADDED = Rule(
    "output_enum_value_added",
    F,
    "An output enum gained a value (or lost its enum): old clients may not understand what comes back. Gray.",
    False,
    False,
    gray=True,
)
OUTPUT_TYPE_NARROWED = Rule(
    "output_type_narrowed",
    F,
    "The output got stricter (property became required, enum value removed, bound "
    "tightened…): old clients still parse it.",
    False,
    False,
)
OUTPUT_TYPE_WIDENED = Rule(
    "output_type_widened",
    F,
    "An output bound relaxed (maximum raised, pattern removed, extra properties "
    "allowed…): clients that relied on the old bound may misread. Gray.",
    False,
    False,
    gray=True,
)
OUTPUT_SCHEMA_REMOVED = Rule(
    "output_schema_removed",
    F,
    "The tool no longer declares an outputSchema: structuredContent is no longer promised.",
    True,
    False,
)
OUTPUT_SCHEMA_ADDED = Rule("output_schema_added", F, "The tool now declares an outputSchema.", False, False)
OUTPUT_ANNOTATION_CHANGED = Rule(
    "output_annotation_changed",
    F,
    "A description, default or other annotation inside the outputSchema changed.",
    False,
    False,
)

RULES = (
    OUTPUT_PROPERTY_REMOVED,
    OUTPUT_PROPERTY_ADDED,
    OUTPUT_TYPE_CHANGED,
    OUTPUT_PROPERTY_NO_LONGER_REQUIRED,
    OUTPUT_ENUM_VALUE_ADDED,
    OUTPUT_TYPE_NARROWED,
    OUTPUT_TYPE_WIDENED,
    OUTPUT_SCHEMA_REMOVED,
    OUTPUT_SCHEMA_ADDED,
    OUTPUT_ANNOTATION_CHANGED,
)


def classify(fact: Fact) -> Rule | None:
    match fact.kind:
        case "property_added":
            return OUTPUT_PROPERTY_ADDED
        case "required_added":
            return None  # reported once, as output_property_added
        case "property_removed":
            return OUTPUT_PROPERTY_REMOVED
        case "became_optional":
            return OUTPUT_PROPERTY_NO_LONGER_REQUIRED
        case "became_required":
            return OUTPUT_TYPE_NARROWED
        case "type":
            return OUTPUT_TYPE_NARROWED if fact.direction == "narrowed" else OUTPUT_TYPE_CHANGED
        case "enum":
            if fact.direction == "widened":
                return OUTPUT_ENUM_VALUE_ADDED
            return OUTPUT_TYPE_NARROWED if fact.direction == "narrowed" else OUTPUT_TYPE_CHANGED
        case "constraint":
            if fact.direction == "narrowed":
                return OUTPUT_TYPE_NARROWED
            return OUTPUT_TYPE_WIDENED if fact.direction == "widened" else OUTPUT_TYPE_CHANGED
        case "annotation":
            return OUTPUT_ANNOTATION_CHANGED
    return None


def check(tool: str, before: Any, after: Any) -> Iterator[dict[str, Any]]:
    if before is None and after is None:
        return
    if before is None:
        yield make_change(OUTPUT_SCHEMA_ADDED, "tools", tool, "outputSchema", None, strip_titles(after))
        return
    if after is None:
        yield make_change(OUTPUT_SCHEMA_REMOVED, "tools", tool, "outputSchema", strip_titles(before), None)
        return
    for fact in diff_schemas(before, after):
        rule = classify(fact)
        if rule is not None:
            yield make_change(
                rule, "tools", tool, join_path("outputSchema", fact.path), fact.before, fact.after, hint_for(fact)
            )
