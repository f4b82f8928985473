"""Family `output_schema`: a tool's `outputSchema`, i.e. what `structuredContent` a client parses.

The direction flips against input: a narrower output is safe, a wider one may surprise a client
that parses the old shape. Models rarely see output schemas, so these rules do not affect models.
"""

from __future__ import annotations

from collections.abc import Iterator

from watcher.contract.rules.base import Change, Compared, Rule, join_path, make_change
from watcher.contract.rules.input_schema import BOUND_REWRITTEN, PATTERN_CHANGED_UNKNOWN, PATTERN_REWRITTEN, hint_for
from watcher.contract.schema_diff import Fact, diff_schemas, strip_titles

FAMILY = "output_schema"
OUTPUT_PROPERTY_REMOVED = Rule(
    id="output_property_removed",
    family=FAMILY,
    doc="An output property is gone (or renamed): clients reading it fail.",
    breaks_clients=True,
    affects_models=False,
)
OUTPUT_PROPERTY_ADDED = Rule(
    id="output_property_added",
    family=FAMILY,
    doc="A new output property: safe for tolerant clients (those that ignore unknown fields).",
    breaks_clients=False,
    affects_models=False,
)
OUTPUT_TYPE_CHANGED = Rule(
    id="output_type_changed",
    family=FAMILY,
    doc="An output value's type changed or widened to a new type (string → object, integer → number, null "
    "allowed…): clients parse the old type and fail or misread.",
    breaks_clients=True,
    affects_models=False,
)
OUTPUT_PROPERTY_NO_LONGER_REQUIRED = Rule(
    id="output_property_no_longer_required",
    family=FAMILY,
    doc="An output property left `required`: clients that rely on it may find it missing.",
    breaks_clients=True,
    affects_models=False,
)
OUTPUT_ENUM_VALUE_ADDED = Rule(
    id="output_enum_value_added",
    family=FAMILY,
    doc="An output enum gained a value (or lost its enum): old clients may not understand what comes back. Gray.",
    breaks_clients=False,
    affects_models=False,
    gray=True,
)
OUTPUT_TYPE_NARROWED = Rule(
    id="output_type_narrowed",
    family=FAMILY,
    doc="The output got stricter (property became required, enum value removed, bound "
    "tightened…): old clients still parse it.",
    breaks_clients=False,
    affects_models=False,
)
OUTPUT_TYPE_WIDENED = Rule(
    id="output_type_widened",
    family=FAMILY,
    doc="An output bound relaxed (maximum raised, pattern removed, extra properties "
    "allowed…): clients that relied on the old bound may misread. Gray.",
    breaks_clients=False,
    affects_models=False,
    gray=True,
)
OUTPUT_FORMAT_CHANGED = Rule(
    id="output_format_changed",
    family=FAMILY,
    doc="An output string's format was added, removed or replaced: whether the server kept to the old one cannot "
    "be read from the schema, so a client that parses it may or may not misread. Dangerous.",
    breaks_clients=False,
    affects_models=False,
    dangerous=True,
)
OUTPUT_SCHEMA_REMOVED = Rule(
    id="output_schema_removed",
    family=FAMILY,
    doc="The tool no longer declares an outputSchema: structuredContent is no longer promised.",
    breaks_clients=True,
    affects_models=False,
)
OUTPUT_SCHEMA_ADDED = Rule(
    id="output_schema_added",
    family=FAMILY,
    doc="The tool now declares an outputSchema.",
    breaks_clients=False,
    affects_models=False,
)
OUTPUT_ANNOTATION_CHANGED = Rule(
    id="output_annotation_changed",
    family=FAMILY,
    doc="A description, default or other annotation inside the outputSchema changed.",
    breaks_clients=False,
    affects_models=False,
)

RULES = (
    OUTPUT_PROPERTY_REMOVED,
    OUTPUT_PROPERTY_ADDED,
    OUTPUT_TYPE_CHANGED,
    OUTPUT_PROPERTY_NO_LONGER_REQUIRED,
    OUTPUT_ENUM_VALUE_ADDED,
    OUTPUT_TYPE_NARROWED,
    OUTPUT_TYPE_WIDENED,
    OUTPUT_FORMAT_CHANGED,
    OUTPUT_SCHEMA_REMOVED,
    OUTPUT_SCHEMA_ADDED,
    OUTPUT_ANNOTATION_CHANGED,
)


def check(compared: Compared) -> Iterator[Change]:
    """Compare a tool's outputSchema (present on both sides, added or removed)."""
    if not compared.both_sides:
        return
    before, after = compared.before.get("outputSchema"), compared.after.get("outputSchema")
    where = (compared.list_name, compared.name)
    if before is None and after is None:
        return
    if before is None:
        yield make_change(OUTPUT_SCHEMA_ADDED, *where, "outputSchema", None, strip_titles(after))
        return
    if after is None:
        yield make_change(OUTPUT_SCHEMA_REMOVED, *where, "outputSchema", strip_titles(before), None)
        return
    for fact in diff_schemas(before, after):
        rule = _classify(fact)
        if rule is not None:
            path = join_path("outputSchema", fact.path)
            yield make_change(rule, *where, path, fact.before, fact.after, hint_for(fact))


def _classify(fact: Fact) -> Rule | None:
    """The output rule for one structural difference (None: another difference reports it)."""
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
            if fact.keyword == "format":
                return OUTPUT_FORMAT_CHANGED
            if fact.direction == "equivalent":
                return PATTERN_REWRITTEN if fact.keyword == "pattern" else BOUND_REWRITTEN
            if fact.direction == "unknown":
                return PATTERN_CHANGED_UNKNOWN
            if fact.direction == "narrowed":
                return OUTPUT_TYPE_NARROWED
            return OUTPUT_TYPE_WIDENED if fact.direction == "widened" else OUTPUT_TYPE_CHANGED
        case "annotation":
            return OUTPUT_ANNOTATION_CHANGED
    return None
