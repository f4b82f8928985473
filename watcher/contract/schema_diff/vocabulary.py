"""The JSON Schema keywords as the diff sorts them (annotations, ignored, bounds, the keywords of each
type), and the `Fact` it records for a difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ANNOTATIONS = frozenset(
    {
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
    }
)


IGNORED = frozenset(
    {"title", "$schema", "$id", "$anchor", "$dynamicAnchor", "$defs", "definitions", "$vocabulary", "discriminator"}
)


UPPER_BOUNDS = frozenset({"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"})
LOWER_BOUNDS = frozenset({"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"})
STRICT_WHEN_PRESENT = frozenset({"pattern", "format"})
HANDLED = (
    frozenset(
        {
            "type",
            "enum",
            "const",
            "properties",
            "required",
            "additionalProperties",
            "unevaluatedProperties",
            "items",
            "prefixItems",
            "anyOf",
            "oneOf",
            "allOf",
            "multipleOf",
            "uniqueItems",
        }
    )
    | UPPER_BOUNDS
    | LOWER_BOUNDS
    | STRICT_WHEN_PRESENT
)


TYPE_KEYWORDS: dict[str, frozenset[str]] = {
    "string": frozenset({"minLength", "maxLength", "pattern", "format", "contentMediaType", "contentEncoding"}),
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
    "array": frozenset(
        {
            "items",
            "prefixItems",
            "minItems",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
            "unevaluatedItems",
        }
    ),
    "object": frozenset(
        {
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "minProperties",
            "maxProperties",
            "dependentRequired",
            "dependentSchemas",
            "unevaluatedProperties",
        }
    ),
}


TYPE_KEYWORDS["integer"] = TYPE_KEYWORDS["number"]


ALL_TYPE_KEYWORDS = frozenset().union(*TYPE_KEYWORDS.values())


@dataclass(frozen=True, slots=True)
class Fact:
    """One structural difference.

    kind: property_added | property_removed | required_added | became_required | became_optional |
          type | enum | constraint | annotation
    direction (type / enum / constraint): narrowed (accepts fewer values) | widened | changed (neither or both)
               | equivalent (bounds or a pattern spelled differently, admitting the same values)
               | unknown (a pattern whose inclusion cannot be decided: never guessed as narrowed)
    direction (property_removed): narrowed (the object no longer admits the key) | ignored (the object
               admits unknown keys, so a value sent for it still validates and is silently dropped)
    """

    kind: str
    path: str
    before: Any = None
    after: Any = None
    direction: str | None = None
    keyword: str | None = None
    names: tuple[str, ...] = ()


def narrows(fact: Fact) -> bool:
    """Whether a fact means some value the old schema accepted is no longer accepted."""
    if fact.kind in ("required_added", "became_required"):
        return True
    if fact.kind == "property_removed":
        return fact.direction != "ignored"
    if fact.kind == "constraint" and fact.keyword == "format":
        # Whether a server enforces a format cannot be read from the schema: graded apart, never a narrowing.
        return False
    if fact.kind in ("type", "enum", "constraint"):
        return fact.direction in ("narrowed", "changed", "unknown")
    return False
