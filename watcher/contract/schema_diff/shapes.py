"""What a schema node is: its type key (how union members are matched across versions), its slice
for one of several types, its enum values, a mergeable `allOf`, and the document `$ref`s point into.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from watcher.contract.schema_diff.canonical import canonical, json_equal, strip_titles
from watcher.contract.schema_diff.vocabulary import ALL_TYPE_KEYWORDS, ANNOTATIONS, IGNORED, TYPE_KEYWORDS


@dataclass(slots=True)
class Doc:
    """One side's schema document: the root that local `$ref`s point into."""

    root: Any

    def lookup(self, ref: str) -> Any:
        if not ref.startswith("#"):
            return None
        node = self.root
        for raw in ref[1:].split("/")[1:] if ref != "#" else []:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node


_MERGEABLE = frozenset({"type", "properties", "required", "title", "description"})


def merge_object_members(node: dict[str, Any], members: list[Any]) -> dict[str, Any] | None:
    """`allOf` of plain object members (properties and required only, no property named twice, none
    closed by additionalProperties) as the one object it means; None when it cannot be merged exactly."""
    rest = {k: v for k, v in node.items() if k != "allOf"}
    parts = [rest, *members]
    if not all(isinstance(p, dict) and set(p) - ANNOTATIONS <= _MERGEABLE for p in members):
        return None
    if set(rest) - ANNOTATIONS - IGNORED - _MERGEABLE:
        return None
    if any(p.get("type", "object") != "object" for p in parts):
        return None
    properties: dict[str, Any] = {}
    required: list[str] = []
    for part in parts:
        props = part.get("properties") or {}
        if not isinstance(props, dict) or set(props) & set(properties):
            return None
        properties.update(props)
        required += [r for r in part.get("required") or [] if isinstance(r, str) and r not in required]
    merged = {k: v for k, v in rest.items() if k not in ("properties", "required")}
    merged.update(type="object", properties=properties)
    if required:
        merged["required"] = required
    return merged


def no_op(key: str, value: Any) -> Any:
    """None for a keyword value that constrains nothing: `propertyNames: {type: string}` (every JSON object key
    is a string; zod emits it for records)."""
    if key == "propertyNames" and json_equal(strip_titles(value), {"type": "string"}):
        return None
    return value


def admits_unknown_keys(node: dict[str, Any]) -> bool:
    """An object node that accepts any key it does not name (additionalProperties and
    unevaluatedProperties absent or true, no patternProperties to match a key against)."""
    open_values: tuple[Any, ...] = (None, True, {})
    return (
        node.get("additionalProperties") in open_values
        and node.get("unevaluatedProperties") in open_values
        and not node.get("patternProperties")
    )


def is_union(node: Any) -> bool:
    return isinstance(node, dict) and (
        isinstance(node.get("anyOf"), list)
        or isinstance(node.get("oneOf"), list)
        or (isinstance(node.get("type"), list) and len(node["type"]) != 1)
    )


def bool_key(node: Any) -> str:
    if node is True or node == {}:
        return "any"
    if node is False:
        return "never"
    return type_key(node, in_union=False) if isinstance(node, dict) else "any"


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def type_key(node: dict[str, Any], in_union: bool) -> str:
    """The type key a variant is matched by across versions."""
    if "$recursiveRef" in node:
        return f"ref:{node['$recursiveRef']}"
    if in_union and "const" in node:
        return "const:" + canonical(node["const"])
    declared = node.get("type")
    if isinstance(declared, str):
        return declared
    members = node.get("allOf")
    if isinstance(members, list):
        # An untyped allOf takes its members' type: it is compared as that type, member by member.
        kinds = {type_key(m, in_union=False) for m in members if isinstance(m, dict)} - {"any"}
        if len(kinds) == 1:
            return kinds.pop()
    if any(k in node for k in TYPE_KEYWORDS["object"]):
        return "object"
    if any(k in node for k in TYPE_KEYWORDS["array"]):
        return "array"
    values = enum_values(node)
    if values:
        kinds = {json_type(v) for v in values}
        if len(kinds) == 1:
            return kinds.pop()
    return "any"


def keyed_variants(
    members: Sequence[tuple[Any, tuple[str, ...], str | None]], in_union: bool
) -> dict[str, tuple[Any, tuple[str, ...]]]:
    """Key union members by type; members sharing a type are told apart by `$ref` name, then title."""
    base = [(bool_key(m) if not isinstance(m, dict) else type_key(m, in_union)) for m, _, _ in members]
    out: dict[str, tuple[Any, tuple[str, ...]]] = {}
    for (member, stack, ref_name), key in zip(members, base, strict=True):
        if base.count(key) > 1:
            label = ref_name or (member.get("title") if isinstance(member, dict) else None)
            key = f"{key}:{label}" if label else key
        unique, n = key, 2
        while unique in out:
            unique, n = f"{key}#{n}", n + 1
        variant = {k: v for k, v in member.items() if k not in IGNORED} if isinstance(member, dict) else member
        out[unique] = (variant, stack)
    return out


def type_slice(node: dict[str, Any], type_name: str) -> dict[str, Any] | None:
    """The part of a `type: [a, b]` node that applies to one of its types (None: its enum lists no value of it)."""
    own = TYPE_KEYWORDS.get(type_name, frozenset())
    sliced: dict[str, Any] = {"type": type_name}
    for key, value in node.items():
        if key in ("type",) or key in ANNOTATIONS or key in IGNORED:
            continue
        if key in ALL_TYPE_KEYWORDS and key not in own:
            continue
        if key == "enum" and isinstance(value, list):
            matching = [
                v for v in value if json_type(v) == type_name or (type_name == "number" and json_type(v) == "integer")
            ]
            if not matching:
                return None
            if not covers_type(matching, type_name):
                sliced["enum"] = matching
            continue
        sliced[key] = value
    return sliced


def covers_type(values: list[Any], type_name: str) -> bool:
    """Whether the values are every value of the type (`null`; `true` and `false`): listing them adds nothing."""
    if type_name == "null":
        return any(v is None for v in values)
    return type_name == "boolean" and {canonical(v) for v in values} == {"true", "false"}


def enum_values(node: dict[str, Any]) -> list[Any] | None:
    values = node.get("enum")
    if isinstance(values, list):
        return values
    if "const" in node:
        return [node["const"]]
    return None


def type_direction(before: str, after: str) -> str:
    if before == after:
        return "changed"
    if before == "any" or after == "never":
        return "narrowed"
    if after == "any" or before == "never":
        return "widened"
    if (before, after) == ("integer", "number"):
        return "widened"
    if (before, after) == ("number", "integer"):
        return "narrowed"
    return "changed"
