"""Family `input_schema`: a tool's `inputSchema`, i.e. what a call may send.

Narrowing rejects calls that used to work (breaks clients); widening accepts more (safe). Models
read the input schema to build arguments, so every rule here also affects models except the
HTTP-header annotation one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules.base import Change, Compared, Rule, join_path, make_change
from watcher.contract.rules.text import DESCRIPTION_CHANGED
from watcher.contract.schema_diff import Fact, diff_schemas

FAMILY = "input_schema"
REQUIRED_PARAMETER_ADDED = Rule(
    id="required_parameter_added",
    family=FAMILY,
    doc="A new required parameter: calls that worked before lack it and are rejected.",
    breaks_clients=True,
    affects_models=True,
)
REQUIRED_PARAMETER_WITH_DEFAULT = Rule(
    id="required_parameter_with_default",
    family=FAMILY,
    doc="A parameter became required (new, or formerly optional) but declares a default: zod 4's output-mode "
    "schemas list defaulted parameters as required, and the server fills the default in, so calls without it "
    "still work; the model sees a parameter it must now send.",
    breaks_clients=False,
    affects_models=True,
)
OPTIONAL_PARAMETER_ADDED = Rule(
    id="optional_parameter_added",
    family=FAMILY,
    doc="A new optional parameter: old calls still valid; the model sees a new choice.",
    breaks_clients=False,
    affects_models=True,
)
PARAMETER_REMOVED = Rule(
    id="parameter_removed",
    family=FAMILY,
    doc="A parameter is gone (or renamed) from an object that refuses unknown keys: calls that send it are rejected.",
    breaks_clients=True,
    affects_models=True,
)
PARAMETER_IGNORED = Rule(
    id="parameter_ignored",
    family=FAMILY,
    doc="A parameter is gone from an object that admits unknown keys: calls that send it still validate, but "
    "the value is silently ignored, so the call no longer means what it did. Dangerous.",
    breaks_clients=False,
    affects_models=True,
    dangerous=True,
)
PARAMETER_BECAME_REQUIRED = Rule(
    id="parameter_became_required",
    family=FAMILY,
    doc="An optional parameter became required: calls that omitted it are rejected.",
    breaks_clients=True,
    affects_models=True,
)
PARAMETER_BECAME_OPTIONAL = Rule(
    id="parameter_became_optional",
    family=FAMILY,
    doc="A required parameter became optional: old calls still valid.",
    breaks_clients=False,
    affects_models=True,
)
TYPE_CHANGED = Rule(
    id="type_changed",
    family=FAMILY,
    doc="A parameter's type changed incompatibly (string → object, a const replaced…).",
    breaks_clients=True,
    affects_models=True,
)
TYPE_NARROWED = Rule(
    id="type_narrowed",
    family=FAMILY,
    doc="Fewer values accepted: enum added or value removed, maximum lowered / minimum raised, maxLength/minLength "
    "tightened, pattern added or changed, additionalProperties: false added, items narrowed, a union member (e.g. "
    "null) dropped; a string keyword only when it refuses a string the old node's other keywords let through.",
    breaks_clients=True,
    affects_models=True,
)
TYPE_WIDENED = Rule(
    id="type_widened",
    family=FAMILY,
    doc="More values accepted: enum value added or enum dropped, bound relaxed, pattern removed, integer → number, "
    "null or another union member allowed.",
    breaks_clients=False,
    affects_models=True,
)
DEFAULT_CHANGED = Rule(
    id="default_changed",
    family=FAMILY,
    doc="A parameter's default changed (or appeared/disappeared): calls that omit it now behave differently.",
    breaks_clients=False,
    affects_models=True,
)
CONSTRAINT_CHANGED = Rule(
    id="constraint_changed",
    family=FAMILY,
    doc="A validation keyword with no known direction changed (allOf, not, if/then/else, patternProperties, "
    "dependentRequired…); treated as breaking.",
    breaks_clients=True,
    affects_models=True,
)
SCHEMA_ANNOTATION_CHANGED = Rule(
    id="schema_annotation_changed",
    family=FAMILY,
    doc="An annotation the model may read changed (examples, deprecated, readOnly, x-* keywords…).",
    breaks_clients=False,
    affects_models=True,
)
PATTERN_CHANGED_UNKNOWN = Rule(
    id="pattern_changed_unknown",
    family=FAMILY,
    doc="A pattern changed in a way its inclusion cannot be decided here (lookarounds, back-references, \\b, "
    "Unicode properties…): changed, direction unknown; never guessed as narrowed. Dangerous.",
    breaks_clients=False,
    affects_models=True,
    dangerous=True,
)
FORMAT_CHANGED = Rule(
    id="format_changed",
    family=FAMILY,
    doc="A string's format was added, removed or replaced: whether the server enforces a format cannot be read "
    "from the schema, so calls may or may not be refused now. Dangerous.",
    breaks_clients=False,
    affects_models=True,
    dangerous=True,
)
PATTERN_REWRITTEN = Rule(
    id="pattern_rewritten",
    family=FAMILY,
    doc="A pattern was spelled differently but admits exactly the same strings (decided by automaton "
    "inclusion both ways): a note, breaking nothing.",
    breaks_clients=False,
    affects_models=False,
)
BOUND_REWRITTEN = Rule(
    id="bound_rewritten",
    family=FAMILY,
    doc="A numeric bound was spelled differently but admits the same values (integer exclusiveMaximum n ↔ maximum "
    "n−1, draft-04's boolean form, a bound at or beyond ±(2^53−1)): a note, breaking nothing.",
    breaks_clients=False,
    affects_models=False,
)
X_MCP_HEADER_INVALID = Rule(
    id="x_mcp_header_invalid",
    family=FAMILY,
    doc="The tool's x-mcp-header annotations violate the spec: a Streamable HTTP client must drop the whole tool.",
    breaks_clients=True,
    affects_models=True,
)
X_MCP_HEADER_CHANGED = Rule(
    id="x_mcp_header_changed",
    family=FAMILY,
    doc="A valid x-mcp-header annotation changed: the Mcp-Param-* header that proxies and gateways see changes.",
    breaks_clients=False,
    affects_models=False,
)

RULES = (
    REQUIRED_PARAMETER_ADDED,
    REQUIRED_PARAMETER_WITH_DEFAULT,
    OPTIONAL_PARAMETER_ADDED,
    PARAMETER_REMOVED,
    PARAMETER_IGNORED,
    PARAMETER_BECAME_REQUIRED,
    PARAMETER_BECAME_OPTIONAL,
    TYPE_CHANGED,
    TYPE_NARROWED,
    TYPE_WIDENED,
    DEFAULT_CHANGED,
    CONSTRAINT_CHANGED,
    SCHEMA_ANNOTATION_CHANGED,
    PATTERN_CHANGED_UNKNOWN,
    FORMAT_CHANGED,
    PATTERN_REWRITTEN,
    BOUND_REWRITTEN,
    X_MCP_HEADER_INVALID,
    X_MCP_HEADER_CHANGED,
)

_BY_DIRECTION = {"narrowed": TYPE_NARROWED, "widened": TYPE_WIDENED}


def check(compared: Compared) -> Iterator[Change]:
    """Compare a tool's inputSchema. A new tool is checked only for invalid x-mcp-header annotations."""
    if compared.after is None:
        return
    before = compared.before.get("inputSchema") if compared.before is not None else None
    after = compared.after.get("inputSchema")
    if compared.before is not None:
        for fact in diff_schemas(before, after):
            rule = _classify(fact)
            if rule is not None:
                path = join_path("inputSchema", fact.path)
                yield make_change(
                    rule, compared.list_name, compared.name, path, fact.before, fact.after, hint_for(fact)
                )
    yield from _invalid_header(compared, before, after)


def hint_for(fact: Fact) -> str | None:
    """A short note naming what a schema change added or removed (shared with the output_schema family)."""
    if not fact.names:
        return None
    labels = {
        "required_added": "new required parameter(s)",
        "became_required": "now required",
        "became_optional": "now optional",
        "enum": "values " + ("added" if fact.direction == "widened" else "removed"),
        "type": "union members " + ("added" if fact.direction == "widened" else "removed"),
    }
    label = labels.get(fact.kind)
    return f"{label}: {', '.join(fact.names)}" if label else None


def _classify(fact: Fact) -> Rule | None:
    """The input rule for one structural difference (None: another difference reports it)."""
    match fact.kind:
        case "required_added":
            return REQUIRED_PARAMETER_WITH_DEFAULT if fact.keyword == "defaulted" else REQUIRED_PARAMETER_ADDED
        case "property_added":
            # A new required parameter is reported once, on the `required` list.
            return OPTIONAL_PARAMETER_ADDED if fact.keyword == "optional" else None
        case "property_removed":
            return PARAMETER_IGNORED if fact.direction == "ignored" else PARAMETER_REMOVED
        case "became_required":
            return REQUIRED_PARAMETER_WITH_DEFAULT if fact.keyword == "defaulted" else PARAMETER_BECAME_REQUIRED
        case "became_optional":
            return PARAMETER_BECAME_OPTIONAL
        case "type":
            return _BY_DIRECTION.get(fact.direction or "", TYPE_CHANGED)
        case "enum":
            return _BY_DIRECTION.get(fact.direction or "", TYPE_CHANGED)
        case "constraint":
            if fact.keyword == "format":
                return FORMAT_CHANGED
            if fact.direction == "equivalent":
                return PATTERN_REWRITTEN if fact.keyword == "pattern" else BOUND_REWRITTEN
            if fact.direction == "unknown":
                return PATTERN_CHANGED_UNKNOWN
            return _BY_DIRECTION.get(fact.direction or "", CONSTRAINT_CHANGED)
        case "annotation":
            if fact.keyword == "description":
                return DESCRIPTION_CHANGED
            if fact.keyword == "default":
                return DEFAULT_CHANGED
            if fact.keyword == "x-mcp-header":
                return X_MCP_HEADER_CHANGED
            return SCHEMA_ANNOTATION_CHANGED
    return None


def _invalid_header(compared: Compared, before: Any, after: Any) -> Iterator[Change]:
    """A tool whose annotations became invalid (or a new tool born invalid) vanishes from HTTP clients."""
    reason = _x_mcp_header_problem(after)
    if reason is not None and (before is None or _x_mcp_header_problem(before) is None):
        yield make_change(
            X_MCP_HEADER_INVALID,
            compared.list_name,
            compared.name,
            "inputSchema",
            None,
            reason,
            "Streamable HTTP clients drop this tool from their list without an error",
        )


X_MCP_HEADER_KEY = "x-mcp-header"


def _x_mcp_header_problem(schema: Any) -> str | None:
    """The SDK's own verdict on a schema's `x-mcp-header` annotations (None: valid or none).

    The SDK (and with it all of `mcp`) is imported only for a schema that has the key somewhere: the SDK's
    check looks only at objects that hold it, so without one its answer is None, and a `diff` starts fast."""
    if not _has_key(schema, X_MCP_HEADER_KEY):
        return None
    from mcp.shared.inbound import find_invalid_x_mcp_header

    return find_invalid_x_mcp_header(schema)


def _has_key(node: Any, key: str) -> bool:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if key in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
