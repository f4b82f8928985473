"""Family `input_schema`: a tool's `inputSchema`, i.e. what a call may send.

Narrowing rejects calls that used to work (breaks clients); widening accepts more (safe). Models
read the input schema to build arguments, so every rule here also affects models except the
HTTP-header annotation one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcp.shared.inbound import find_invalid_x_mcp_header

from watcher.contract.rules.base import Rule, join_path, make_change
from watcher.contract.rules.text import DESCRIPTION_CHANGED
from watcher.contract.schema_diff import Fact, diff_schemas

F = "input_schema"
REQUIRED_PARAMETER_ADDED = Rule(
    "required_parameter_added",
    F,
    "A new required parameter: calls that worked before lack it and are rejected.",
    True,
    True,
)
OPTIONAL_PARAMETER_ADDED = Rule(
    "optional_parameter_added",
    F,
    "A new optional parameter: old calls still valid; the model sees a new choice.",
    False,
    True,
)
PARAMETER_REMOVED = Rule(
    "parameter_removed",
    F,
    "A parameter is gone (or renamed): calls that send it are rejected, or it is silently ignored.",
    True,
    True,
)
PARAMETER_BECAME_REQUIRED = Rule(
    "parameter_became_required",
    F,
    "An optional parameter became required: calls that omitted it are rejected.",
    True,
    True,
)
PARAMETER_BECAME_OPTIONAL = Rule(
    "parameter_became_optional", F, "A required parameter became optional: old calls still valid.", False, True
)
TYPE_CHANGED = Rule(
    "type_changed", F, "A parameter's type changed incompatibly (string → object, a const replaced…).", True, True
)
TYPE_NARROWED = Rule(
    "type_narrowed",
    F,
    "Fewer values accepted: enum added or value removed, maximum lowered / minimum raised, maxLength/minLength "
    "tightened, pattern or format added or changed, additionalProperties: false added, items narrowed, a union "
    "member (e.g. null) dropped.",
    True,
    True,
)
TYPE_WIDENED = Rule(
    "type_widened",
    F,
    "More values accepted: enum value added or enum dropped, bound relaxed, pattern removed, integer → number, "
    "null or another union member allowed.",
    False,
    True,
)
DEFAULT_CHANGED = Rule(
    "default_changed",
    F,
    "A parameter's default changed (or appeared/disappeared): calls that omit it now behave differently.",
    False,
    True,
)
CONSTRAINT_CHANGED = Rule(
    "constraint_changed",
    F,
    "A validation keyword with no known direction changed (allOf, not, if/then/else, patternProperties, "
    "dependentRequired…); treated as breaking.",
    True,
    True,
)
SCHEMA_ANNOTATION_CHANGED = Rule(
    "schema_annotation_changed",
    F,
    "An annotation the model may read changed (examples, deprecated, readOnly, x-* keywords…).",
    False,
    True,
)
X_MCP_HEADER_INVALID = Rule(
    "x_mcp_header_invalid",
    F,
    "The tool's x-mcp-header annotations violate the spec: a Streamable HTTP client must drop the whole tool.",
    True,
    True,
)
X_MCP_HEADER_CHANGED = Rule(
    "x_mcp_header_changed",
    F,
    "A valid x-mcp-header annotation changed: the Mcp-Param-* header that proxies and gateways see changes.",
    False,
    False,
)

RULES = (
    REQUIRED_PARAMETER_ADDED,
    OPTIONAL_PARAMETER_ADDED,
    PARAMETER_REMOVED,
    PARAMETER_BECAME_REQUIRED,
    PARAMETER_BECAME_OPTIONAL,
    TYPE_CHANGED,
    TYPE_NARROWED,
    TYPE_WIDENED,
    DEFAULT_CHANGED,
    CONSTRAINT_CHANGED,
    SCHEMA_ANNOTATION_CHANGED,
    X_MCP_HEADER_INVALID,
    X_MCP_HEADER_CHANGED,
)

_BY_DIRECTION = {"narrowed": TYPE_NARROWED, "widened": TYPE_WIDENED}


def classify(fact: Fact) -> Rule | None:
    """The input rule for one structural fact (None: the fact is reported by another fact)."""
    match fact.kind:
        case "required_added":
            return REQUIRED_PARAMETER_ADDED
        case "property_added":
            # A new required parameter is reported once, on the `required` list.
            return OPTIONAL_PARAMETER_ADDED if fact.keyword == "optional" else None
        case "property_removed":
            return PARAMETER_REMOVED
        case "became_required":
            return PARAMETER_BECAME_REQUIRED
        case "became_optional":
            return PARAMETER_BECAME_OPTIONAL
        case "type":
            return _BY_DIRECTION.get(fact.direction or "", TYPE_CHANGED)
        case "enum":
            return _BY_DIRECTION.get(fact.direction or "", TYPE_CHANGED)
        case "constraint":
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


def hint_for(fact: Fact) -> str | None:
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


def check(tool: str, before: Any, after: Any) -> Iterator[dict[str, Any]]:
    for fact in diff_schemas(before, after):
        rule = classify(fact)
        if rule is not None:
            yield make_change(
                rule, "tools", tool, join_path("inputSchema", fact.path), fact.before, fact.after, hint_for(fact)
            )
    yield from check_x_mcp_header(tool, before, after)


def check_x_mcp_header(tool: str, before: Any, after: Any) -> Iterator[dict[str, Any]]:
    """A tool whose annotations became invalid (or a new tool born invalid) vanishes from HTTP clients."""
    reason = find_invalid_x_mcp_header(after)
    if reason is not None and (before is None or find_invalid_x_mcp_header(before) is None):
        yield make_change(
            X_MCP_HEADER_INVALID,
            "tools",
            tool,
            "inputSchema",
            None,
            reason,
            "Streamable HTTP clients drop this tool from their list without an error",
        )
