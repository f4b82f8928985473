"""Structural diff of two JSON Schema (2020-12) documents, with JSON paths.

Over 350 lines: one walker whose keyword handlers share its recursion state; split, they would pass it around.

The first step of classifying a schema change: this module knows JSON Schema, not MCP. It walks both
trees at once, resolving local `$ref`s (pydantic's `$defs`), splitting unions (`anyOf` / `oneOf`,
`type` lists, nullable `X | null`) into variants keyed by type, and records each difference as a
`Fact` that says which way it goes ("fewer values are accepted here"). The input_schema and
output_schema rule families (`watcher.contract.rules`) turn facts into named changes; the same fact
means different things for what a client sends and what it receives.

Not changes: key order, `title` (generators add it to every node), `$schema` / `$id`, the place a
subschema lives (`$defs` vs inline), the order of `required`, `enum` or union members.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from watcher.contract.patterns import pattern_direction

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
_ALL_TYPE_KEYWORDS = frozenset().union(*TYPE_KEYWORDS.values())
_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9_$@-]+")


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


@dataclass(slots=True)
class _Doc:
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


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality (Python's `==` would take `true` for `1`): `canonical(a) == canonical(b)`, decided
    without `json.dumps` in all but rare cases.

    orjson's compact sorted form (C speed) tells apart whatever `canonical` tells apart, except that it
    writes NaN and ±Infinity as `null`; so different bytes mean different values, and equal bytes mean
    equal values when Python's `==` (which holds for NaN only as the same object) agrees. Values orjson
    cannot write (integers beyond 64 bits, lone surrogates) are compared the `canonical` way."""
    if a is b:
        return True
    try:
        if orjson.dumps(a, option=orjson.OPT_SORT_KEYS) != orjson.dumps(b, option=orjson.OPT_SORT_KEYS):
            return False
    except TypeError:
        return canonical(a) == canonical(b)
    return bool(a == b) or canonical(a) == canonical(b)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def strip_titles(node: Any) -> Any:
    """A copy without generator noise, for showing a subschema in a report."""
    if isinstance(node, dict):
        return {k: strip_titles(v) for k, v in node.items() if k not in IGNORED or k in ("$defs", "definitions")}
    if isinstance(node, list):
        return [strip_titles(v) for v in node]
    return node


def segment(name: str) -> str:
    return name if _PLAIN_SEGMENT.fullmatch(name) else f"[{json.dumps(name, ensure_ascii=False)}]"


def _join(path: str, part: str) -> str:
    if not path:
        return part
    return f"{path}{part}" if part.startswith("[") else f"{path}.{part}"


def diff_schemas(before: Any, after: Any) -> list[Fact]:
    """Facts that turn schema `before` into `after` (both complete documents, `$defs` included)."""
    if json_equal(before, after):
        return []
    walker = _Walker(_Doc(before), _Doc(after))
    walker.node(before, after, "", (), ())
    return walker.facts


class _Walker:
    def __init__(self, doc_a: _Doc, doc_b: _Doc) -> None:
        self.a = doc_a
        self.b = doc_b
        self.facts: list[Fact] = []

    # -- resolution ------------------------------------------------------------------------------

    @staticmethod
    def _resolve(doc: _Doc, node: Any, stack: tuple[str, ...]) -> tuple[Any, tuple[str, ...]]:
        """Inline local `$ref`s (siblings override the target) and single-member `allOf`."""
        for _ in range(64):
            if not isinstance(node, dict):
                return node, stack
            ref = node.get("$ref")
            if isinstance(ref, str):
                if ref in stack:
                    # A recursive schema: compare the reference itself, not an endless unrolling.
                    return {"$recursiveRef": ref}, stack
                target = doc.lookup(ref)
                if target is None:
                    return node, stack
                siblings = {k: v for k, v in node.items() if k != "$ref"}
                node = {**target, **siblings} if isinstance(target, dict) else target
                stack = (*stack, ref)
                continue
            all_of = node.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
                rest = {k: v for k, v in node.items() if k != "allOf"}
                member, stack = _Walker._resolve(doc, all_of[0], stack)
                node = {**member, **rest} if isinstance(member, dict) else member
                continue
            if isinstance(all_of, list) and len(all_of) > 1:
                merged = _merge_object_members(node, [_Walker._resolve(doc, m, stack)[0] for m in all_of])
                if merged is not None:
                    node = merged
                    continue
            return node, stack
        return node, stack

    # -- variants --------------------------------------------------------------------------------

    def _variants(
        self, doc: _Doc, node: Any, stack: tuple[str, ...]
    ) -> tuple[str | None, dict[str, tuple[Any, tuple[str, ...]]]]:
        """Split a resolved node into {type key: (variant schema, ref stack)}, and name the union keyword."""
        if not isinstance(node, dict):
            return None, {_bool_key(node): ({} if node is True else node, stack)}
        union_kw = (
            "anyOf" if isinstance(node.get("anyOf"), list) else "oneOf" if isinstance(node.get("oneOf"), list) else None
        )
        if union_kw:
            shared = {k: v for k, v in node.items() if k not in ANNOTATIONS and k not in IGNORED and k != union_kw}
            raw_members: list[tuple[Any, tuple[str, ...], str | None]] = []
            for member in node[union_kw]:
                ref_name = member.get("$ref", "").rsplit("/", 1)[-1] if isinstance(member, dict) else None
                resolved, member_stack = self._resolve(doc, member, stack)
                if isinstance(resolved, dict) and shared:
                    resolved = {**shared, **resolved}
                # A member that is itself a union contributes its own variants.
                _, inner = self._variants(doc, resolved, member_stack) if _is_union(resolved) else (None, {})
                if inner:
                    raw_members.extend((v, s, None) for v, s in inner.values())
                else:
                    raw_members.append((resolved, member_stack, ref_name or None))
            return union_kw, _keyed(raw_members, in_union=True)
        types = node.get("type")
        if isinstance(types, list) and len(types) != 1:
            split = [(_type_slice(node, t), stack, None) for t in types if isinstance(t, str)]
            return "type", _keyed(split, in_union=True)
        if isinstance(types, list):
            node = {**node, "type": types[0]}
        # Annotations of a plain node were compared by the caller, at the node's own path.
        variant = {k: v for k, v in node.items() if k not in ANNOTATIONS and not k.startswith("x-")}
        return None, {_key(variant, in_union=False): (variant, stack)}

    # -- walking ---------------------------------------------------------------------------------

    def emit(self, fact: Fact) -> None:
        self.facts.append(fact)

    def node(self, a: Any, b: Any, path: str, stack_a: tuple[str, ...], stack_b: tuple[str, ...]) -> None:
        a, stack_a = self._resolve(self.a, a, stack_a)
        b, stack_b = self._resolve(self.b, b, stack_b)
        if a is b and not stack_a and not stack_b:
            return
        self._annotations(a if isinstance(a, dict) else {}, b if isinstance(b, dict) else {}, path)
        kw_a, va = self._variants(self.a, a, stack_a)
        kw_b, vb = self._variants(self.b, b, stack_b)
        if len(va) == 1 and len(vb) == 1 and kw_a is None and kw_b is None:
            (ka, (xa, sa)), (kb, (xb, sb)) = next(iter(va.items())), next(iter(vb.items()))
            if ka == kb:
                self.variant(xa, xb, path, sa, sb)
                return
            direction = _type_direction(ka, kb)
            self.emit(Fact("type", _join(path, "type"), ka, kb, direction, "type"))
            if {ka, kb} == {"integer", "number"}:
                self.variant(xa, xb, path, sa, sb)
            return
        union_kw = kw_b or kw_a or "anyOf"
        pairs, removed, added = self._pair_variants(va, vb)
        for k_old, k_new in pairs:
            member_path = _join(path, f"{union_kw}[{k_old}]")
            (xa, sa), (xb, sb) = va[k_old], vb[k_new]
            if k_old == k_new:
                self.variant(xa, xb, member_path, sa, sb)
            else:
                # Matched across type keys (integer → number, or an old member found inside a new branch).
                self.node(xa, xb, member_path, sa, sb)
        before_keys = sorted(va)
        after_keys = sorted(vb)
        for direction, keys in (("widened", added), ("narrowed", removed)):
            if not keys:
                continue
            enum_like = all(k.startswith("const:") for k in keys)
            if enum_like:
                self.emit(
                    Fact("enum", _join(path, union_kw), before_keys, after_keys, direction, union_kw, tuple(keys))
                )
            elif "any" in keys and direction == "widened":
                self.emit(Fact("type", _join(path, union_kw), before_keys, after_keys, "widened", union_kw))
            else:
                self.emit(
                    Fact("type", _join(path, union_kw), before_keys, after_keys, direction, union_kw, tuple(keys))
                )

    def _pair_variants(
        self, va: dict[str, tuple[Any, tuple[str, ...]]], vb: dict[str, tuple[Any, tuple[str, ...]]]
    ) -> tuple[list[tuple[str, str]], list[str], list[str]]:
        """(old key, new key) pairs, old keys left unmatched, new keys left unmatched.

        Containment first: an old member is paired with a new branch that accepts everything it accepted
        (its own key's branch when that one does, else the first that does), so an object that became
        `oneOf [itself, another]` is no narrowing whatever the keys. Without a containing branch it is
        paired by key as before (the report then says what narrowed), integer ↔ number across keys.
        """
        pairs: list[tuple[str, str]] = []
        unmatched: list[str] = []
        for key in va:
            order = ([key] if key in vb else []) + [k for k in vb if k != key]
            # The containing branch that differs least (a `$ref` branch describing the same properties
            # before a catch-all open object); its own key's branch first among equals.
            fits = [
                (len(facts), n, k)
                for n, k in enumerate(order)
                if (facts := self.contained_facts(va[key], vb[k])) is not None
            ]
            holder = min(fits)[2] if fits else None
            if holder is None and key in vb:
                holder = key
            if holder is None:
                unmatched.append(key)
            else:
                pairs.append((key, holder))
        used = {new for _, new in pairs}
        added = [k for k in vb if k not in used]
        for k_old, k_new in (("integer", "number"), ("number", "integer")):
            if k_old in unmatched and k_new in added:
                unmatched.remove(k_old)
                added.remove(k_new)
                pairs.append((k_old, k_new))
        return pairs, unmatched, added

    def contained(self, a: tuple[Any, tuple[str, ...]], b: tuple[Any, tuple[str, ...]]) -> bool:
        """Whether every value variant `a` accepts is accepted by variant `b` (as far as the facts tell)."""
        return self.contained_facts(a, b) is not None

    def contained_facts(self, a: tuple[Any, tuple[str, ...]], b: tuple[Any, tuple[str, ...]]) -> list[Fact] | None:
        """The facts from variant `a` to variant `b` when `b` accepts every value `a` accepts; else None."""
        probe = _Walker(self.a, self.b)
        probe.node(a[0], b[0], "", a[1], b[1])
        return None if any(narrows(fact) for fact in probe.facts) else probe.facts

    def _annotations(self, a: dict[str, Any], b: dict[str, Any], path: str) -> None:
        for key in sorted(set(a) | set(b)):
            if key in ANNOTATIONS or key.startswith("x-"):
                before, after = a.get(key), b.get(key)
                if not json_equal(before, after):
                    self.emit(Fact("annotation", _join(path, key), before, after, keyword=key))

    def variant(self, a: Any, b: Any, path: str, stack_a: tuple[str, ...], stack_b: tuple[str, ...]) -> None:
        """Compare two variants of the same type key."""
        if not isinstance(a, dict) or not isinstance(b, dict):
            if not json_equal(a, b):
                self.emit(Fact("type", _join(path, "type"), _bool_key(a), _bool_key(b), "changed", "type"))
            return
        # Union members carry their own annotations; single-variant nodes had theirs compared already.
        self._annotations(a, b, path)
        self._enum(a, b, path)
        bounds_a, bounds_b = effective_bounds(a), effective_bounds(b)
        for key in sorted((set(bounds_a) | set(bounds_b)) & (UPPER_BOUNDS | LOWER_BOUNDS)):
            self._bound(key, bounds_a.get(key), bounds_b.get(key), path)
        raw_a, raw_b = _raw_bounds(a), _raw_bounds(b)
        if bounds_a == bounds_b and not json_equal(raw_a, raw_b):
            # Spelled differently, admitting the same values: a note, never a narrowing.
            self.emit(Fact("constraint", _join(path, "bounds"), raw_a, raw_b, "equivalent", "bounds"))
        for key in sorted((set(a) | set(b)) & STRICT_WHEN_PRESENT):
            before, after = a.get(key), b.get(key)
            if not json_equal(before, after):
                if after is None:
                    direction = "widened"
                elif key == "pattern" and isinstance(before, str) and isinstance(after, str):
                    direction = pattern_direction(before, after)
                else:
                    direction = "narrowed"
                self.emit(Fact("constraint", _join(path, key), before, after, direction, key))
        self._multiple_of(a.get("multipleOf"), b.get("multipleOf"), path)
        if bool(a.get("uniqueItems")) != bool(b.get("uniqueItems")):
            direction = "narrowed" if b.get("uniqueItems") else "widened"
            self.emit(
                Fact(
                    "constraint",
                    _join(path, "uniqueItems"),
                    a.get("uniqueItems"),
                    b.get("uniqueItems"),
                    direction,
                    "uniqueItems",
                )
            )
        self._properties(a, b, path, stack_a, stack_b)
        for key in ("additionalProperties", "unevaluatedProperties"):
            self._open_schema(key, a.get(key, True), b.get(key, True), path, stack_a, stack_b)
        self._items(a, b, path, stack_a, stack_b)
        self._all_of(a, b, path, stack_a, stack_b)
        for key in sorted(set(a) | set(b)):
            if key in HANDLED or key in ANNOTATIONS or key in IGNORED or key.startswith("x-"):
                continue
            before, after = _no_op(key, a.get(key)), _no_op(key, b.get(key))
            if not json_equal(strip_titles(before), strip_titles(after)):
                self.emit(
                    Fact("constraint", _join(path, key), strip_titles(before), strip_titles(after), "changed", key)
                )

    def _enum(self, a: dict[str, Any], b: dict[str, Any], path: str) -> None:
        values_a = _enum_values(a)
        values_b = _enum_values(b)
        if values_a is None and values_b is None:
            return
        keyword = "enum" if "enum" in a or "enum" in b else "const"
        where = _join(path, keyword)
        shown_a = a.get(keyword) if keyword in a else values_a
        shown_b = b.get(keyword) if keyword in b else values_b
        if values_a is None:
            self.emit(Fact("enum", where, None, shown_b, "narrowed", keyword))
            return
        if values_b is None:
            self.emit(Fact("enum", where, shown_a, None, "widened", keyword))
            return
        set_a = {canonical(v): v for v in values_a}
        set_b = {canonical(v): v for v in values_b}
        removed = tuple(canonical(set_a[k]) for k in set_a if k not in set_b)
        added = tuple(canonical(set_b[k]) for k in set_b if k not in set_a)
        if keyword == "const" and removed and added:
            self.emit(Fact("enum", where, shown_a, shown_b, "changed", keyword))
            return
        if removed:
            self.emit(Fact("enum", where, shown_a, shown_b, "narrowed", keyword, removed))
        if added:
            self.emit(Fact("enum", where, shown_a, shown_b, "widened", keyword, added))

    def _bound(self, key: str, before: Any, after: Any, path: str) -> None:
        if json_equal(before, after):
            return
        where = _join(path, key)
        if before is None:
            direction = "narrowed"
        elif after is None:
            direction = "widened"
        elif _is_number(before) and _is_number(after):
            tighter = after < before if key in UPPER_BOUNDS else after > before
            direction = "narrowed" if tighter else "widened"
        else:
            direction = "changed"
        self.emit(Fact("constraint", where, before, after, direction, key))

    def _multiple_of(self, before: Any, after: Any, path: str) -> None:
        if json_equal(before, after):
            return
        if before is None:
            direction = "narrowed"
        elif after is None:
            direction = "widened"
        elif _is_number(before) and _is_number(after) and before and after and (after / before).is_integer():
            direction = "narrowed"
        elif _is_number(before) and _is_number(after) and before and after and (before / after).is_integer():
            direction = "widened"
        else:
            direction = "changed"
        self.emit(Fact("constraint", _join(path, "multipleOf"), before, after, direction, "multipleOf"))

    def _properties(
        self, a: dict[str, Any], b: dict[str, Any], path: str, stack_a: tuple[str, ...], stack_b: tuple[str, ...]
    ) -> None:
        props_a: dict[str, Any] = a["properties"] if isinstance(a.get("properties"), dict) else {}
        props_b: dict[str, Any] = b["properties"] if isinstance(b.get("properties"), dict) else {}
        req_a = [r for r in a.get("required", []) if isinstance(r, str)] if isinstance(a.get("required"), list) else []
        req_b = [r for r in b.get("required", []) if isinstance(r, str)] if isinstance(b.get("required"), list) else []
        if not (props_a or props_b or req_a or req_b):
            return
        # Names declared by an allOf member (one that could not be merged) are not gone or new: `_all_of` judges them.
        members_a, members_b = self._member_names(self.a, a), self._member_names(self.b, b)
        names_a = set(props_a) | set(req_a) | members_a
        names_b = set(props_b) | set(req_b) | members_b
        set_req_a, set_req_b = set(req_a), set(req_b)
        required_path = _join(path, "required")
        new_required = sorted(n for n in names_b - names_a if n in set_req_b)
        if new_required:
            self._required_facts("required_added", required_path, req_a, req_b, new_required, props_b)
        for name in sorted(names_b - names_a):
            schema = strip_titles(props_b.get(name, {}))
            detail = "required" if name in set_req_b else "optional"
            self.emit(
                Fact(
                    "property_added",
                    _join(_join(path, "properties"), segment(name)),
                    None,
                    schema,
                    keyword=detail,
                    names=(name,),
                )
            )
        removed_direction = "ignored" if admits_unknown_keys(b) else "narrowed"
        for name in sorted(names_a - names_b):
            schema = strip_titles(props_a.get(name, {}))
            detail = "required" if name in set_req_a else "optional"
            self.emit(
                Fact(
                    "property_removed",
                    _join(_join(path, "properties"), segment(name)),
                    schema,
                    None,
                    removed_direction,
                    keyword=detail,
                    names=(name,),
                )
            )
        common = names_a & names_b
        became_required = sorted(n for n in common if n in set_req_b and n not in set_req_a)
        became_optional = sorted(n for n in common if n in set_req_a and n not in set_req_b)
        if became_required:
            self._required_facts("became_required", required_path, req_a, req_b, became_required, props_b)
        if became_optional:
            self.emit(Fact("became_optional", required_path, req_a, req_b, names=tuple(became_optional)))
        for name in sorted(common):
            in_member = (name in members_a and name not in props_a) or (name in members_b and name not in props_b)
            if (name in props_a or name in props_b) and not in_member:
                self.node(
                    props_a.get(name, True),
                    props_b.get(name, True),
                    _join(_join(path, "properties"), segment(name)),
                    stack_a,
                    stack_b,
                )

    def _required_facts(
        self, kind: str, path: str, req_a: list[str], req_b: list[str], names: list[str], props_b: dict[str, Any]
    ) -> None:
        """Newly required names, those that declare a `default` apart (keyword "defaulted"): zod 4's output-mode
        schemas list a defaulted parameter as required, and the server fills the default in."""
        defaulted = [n for n in names if isinstance(props_b.get(n), dict) and "default" in props_b[n]]
        plain = [n for n in names if n not in defaulted]
        if plain:
            self.emit(Fact(kind, path, req_a, req_b, names=tuple(plain)))
        if defaulted:
            self.emit(Fact(kind, path, req_a, req_b, keyword="defaulted", names=tuple(defaulted)))

    @staticmethod
    def _member_names(doc: _Doc, node: dict[str, Any]) -> set[str]:
        names: set[str] = set()
        members: list[Any] = node["allOf"] if isinstance(node.get("allOf"), list) else []
        for member in members:
            if isinstance(member, dict) and isinstance(member.get("$ref"), str):
                member = doc.lookup(member["$ref"])
            if isinstance(member, dict) and isinstance(member.get("properties"), dict):
                names |= set(member["properties"])
        return names

    def _open_schema(
        self, key: str, a: Any, b: Any, path: str, stack_a: tuple[str, ...], stack_b: tuple[str, ...]
    ) -> None:
        """additionalProperties / unevaluatedProperties: absent means `true`."""
        where = _join(path, key)
        if isinstance(a, dict) and isinstance(b, dict):
            self.node(a, b, where, stack_a, stack_b)
            return
        if json_equal(a, b):
            return
        if a is True or b is False:
            direction = "narrowed"
        elif a is False or b is True:
            direction = "widened"
        else:
            direction = "changed"
        self.emit(Fact("constraint", where, strip_titles(a), strip_titles(b), direction, key))

    def _items(
        self, a: dict[str, Any], b: dict[str, Any], path: str, stack_a: tuple[str, ...], stack_b: tuple[str, ...]
    ) -> None:
        items_a, items_b = a.get("items"), b.get("items")
        if items_a is not None or items_b is not None:
            if items_a is None or items_b is None:
                direction = "narrowed" if items_a is None else "widened"
                self.emit(
                    Fact(
                        "constraint",
                        _join(path, "items"),
                        strip_titles(items_a),
                        strip_titles(items_b),
                        direction,
                        "items",
                    )
                )
            else:
                self.node(items_a, items_b, _join(path, "items"), stack_a, stack_b)
        prefix_a, prefix_b = a.get("prefixItems") or [], b.get("prefixItems") or []
        if isinstance(prefix_a, list) and isinstance(prefix_b, list):
            for index in range(min(len(prefix_a), len(prefix_b))):
                self.node(prefix_a[index], prefix_b[index], _join(path, f"prefixItems[{index}]"), stack_a, stack_b)
            if len(prefix_a) != len(prefix_b):
                self.emit(
                    Fact(
                        "constraint", _join(path, "prefixItems"), len(prefix_a), len(prefix_b), "changed", "prefixItems"
                    )
                )

    def _all_of(
        self, a: dict[str, Any], b: dict[str, Any], path: str, stack_a: tuple[str, ...], stack_b: tuple[str, ...]
    ) -> None:
        """`allOf` (two or more members; one is inlined by `_resolve`): the rest of each node was compared
        already. The new side's members each must accept what the old side accepted — the old node without
        its allOf, or one of its own members — else the change is reported without a direction."""
        members_a: list[Any] = a["allOf"] if isinstance(a.get("allOf"), list) else []
        members_b: list[Any] = b["allOf"] if isinstance(b.get("allOf"), list) else []
        if json_equal(strip_titles(members_a), strip_titles(members_b)):
            return
        parts_a = [({k: v for k, v in a.items() if k != "allOf"}, stack_a), *((m, stack_a) for m in members_a)]
        parts_b = [({k: v for k, v in b.items() if k != "allOf"}, stack_b), *((m, stack_b) for m in members_b)]
        widened = all(any(self.contained(old, (m, stack_b)) for old in parts_a) for m in members_b)
        narrowed = all(any(_Walker(self.b, self.a).contained(new, (m, stack_a)) for new in parts_b) for m in members_a)
        where = _join(path, "allOf")
        if widened and narrowed:
            return
        direction = "widened" if widened else "narrowed" if narrowed else "changed"
        self.emit(Fact("constraint", where, strip_titles(members_a), strip_titles(members_b), direction, "allOf"))


# -- numeric bounds --------------------------------------------------------------------------------

MAX_SAFE_INTEGER = 2**53 - 1
"""JavaScript's Number.MAX_SAFE_INTEGER: zod and others emit it as the bound of "any int"."""
_NUMERIC_BOUNDS = frozenset({"maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"})


def _raw_bounds(node: dict[str, Any]) -> dict[str, Any]:
    return {k: node[k] for k in sorted(_NUMERIC_BOUNDS) if k in node}


def effective_bounds(node: dict[str, Any]) -> dict[str, Any]:
    """The node's size bounds as the values they admit, keyed like the node's own keywords.

    Numeric bounds are rewritten so that equal sets of values compare equal: draft-04's boolean
    `exclusiveMaximum: true` (beside `maximum`) becomes the 2020-12 number form; for `type: integer`
    `exclusiveMaximum: n` becomes `maximum: n-1` (`exclusiveMinimum: n` → `minimum: n+1`), the tighter
    one kept when both are given; a bound at or beyond ±(2^53−1) rejects no value a JSON client can
    send safely and is dropped.
    """
    bounds = {k: v for k, v in node.items() if k in UPPER_BOUNDS | LOWER_BOUNDS and k not in _NUMERIC_BOUNDS}
    upper, lower = _side(node, "maximum", "exclusiveMaximum"), _side(node, "minimum", "exclusiveMinimum")
    integer = node.get("type") == "integer"
    for (inclusive, exclusive), sign in ((upper, 1), (lower, -1)):
        name, ex_name = ("maximum", "exclusiveMaximum") if sign == 1 else ("minimum", "exclusiveMinimum")
        if integer and _is_number(exclusive):
            as_inclusive = math.ceil(exclusive) - 1 if sign == 1 else math.floor(exclusive) + 1
            if not _is_number(inclusive):
                inclusive = as_inclusive
            else:
                inclusive = min(inclusive, as_inclusive) if sign == 1 else max(inclusive, as_inclusive)
            exclusive = None
        if integer and _is_number(inclusive):
            inclusive = math.floor(inclusive) if sign == 1 else math.ceil(inclusive)
        for key, value in ((name, inclusive), (ex_name, exclusive)):
            if value is None:
                continue
            if _is_number(value) and value * sign >= MAX_SAFE_INTEGER:
                continue
            bounds[key] = value
    return bounds


def _side(node: dict[str, Any], inclusive_key: str, exclusive_key: str) -> tuple[Any, Any]:
    """(inclusive bound, exclusive bound) of one side, draft-04's boolean exclusive form resolved."""
    inclusive, exclusive = node.get(inclusive_key), node.get(exclusive_key)
    if isinstance(exclusive, bool):
        if exclusive and inclusive is not None:
            return None, inclusive
        return inclusive, None
    return inclusive, exclusive


# -- helpers -------------------------------------------------------------------------------------


_MERGEABLE = frozenset({"type", "properties", "required", "title", "description"})


def _merge_object_members(node: dict[str, Any], members: list[Any]) -> dict[str, Any] | None:
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


def _no_op(key: str, value: Any) -> Any:
    """None for a keyword value that constrains nothing: `propertyNames: {type: string}` (every JSON object key
    is a string; zod emits it for records)."""
    if key == "propertyNames" and json_equal(strip_titles(value), {"type": "string"}):
        return None
    return value


def narrows(fact: Fact) -> bool:
    """Whether a fact means some value the old schema accepted is no longer accepted."""
    if fact.kind in ("required_added", "became_required"):
        return True
    if fact.kind == "property_removed":
        return fact.direction != "ignored"
    if fact.kind in ("type", "enum", "constraint"):
        return fact.direction in ("narrowed", "changed", "unknown")
    return False


def admits_unknown_keys(node: dict[str, Any]) -> bool:
    """An object node that accepts any key it does not name (additionalProperties and
    unevaluatedProperties absent or true, no patternProperties to match a key against)."""
    open_values: tuple[Any, ...] = (None, True, {})
    return (
        node.get("additionalProperties") in open_values
        and node.get("unevaluatedProperties") in open_values
        and not node.get("patternProperties")
    )


def _is_union(node: Any) -> bool:
    return isinstance(node, dict) and (
        isinstance(node.get("anyOf"), list)
        or isinstance(node.get("oneOf"), list)
        or (isinstance(node.get("type"), list) and len(node["type"]) != 1)
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _bool_key(node: Any) -> str:
    if node is True or node == {}:
        return "any"
    if node is False:
        return "never"
    return _key(node, in_union=False) if isinstance(node, dict) else "any"


def _json_type(value: Any) -> str:
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


def _key(node: dict[str, Any], in_union: bool) -> str:
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
        kinds = {_key(m, in_union=False) for m in members if isinstance(m, dict)} - {"any"}
        if len(kinds) == 1:
            return kinds.pop()
    if any(k in node for k in TYPE_KEYWORDS["object"]):
        return "object"
    if any(k in node for k in TYPE_KEYWORDS["array"]):
        return "array"
    values = _enum_values(node)
    if values:
        kinds = {_json_type(v) for v in values}
        if len(kinds) == 1:
            return kinds.pop()
    return "any"


def _keyed(
    members: Sequence[tuple[Any, tuple[str, ...], str | None]], in_union: bool
) -> dict[str, tuple[Any, tuple[str, ...]]]:
    """Key union members by type; members sharing a type are told apart by `$ref` name, then title."""
    base = [(_bool_key(m) if not isinstance(m, dict) else _key(m, in_union)) for m, _, _ in members]
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


def _type_slice(node: dict[str, Any], type_name: str) -> dict[str, Any]:
    """The part of a `type: [a, b]` node that applies to one of its types."""
    own = TYPE_KEYWORDS.get(type_name, frozenset())
    sliced: dict[str, Any] = {"type": type_name}
    for key, value in node.items():
        if key in ("type",) or key in ANNOTATIONS or key in IGNORED:
            continue
        if key in _ALL_TYPE_KEYWORDS and key not in own:
            continue
        if key == "enum" and isinstance(value, list):
            matching = [
                v for v in value if _json_type(v) == type_name or (type_name == "number" and _json_type(v) == "integer")
            ]
            if matching:
                sliced["enum"] = matching
            continue
        sliced[key] = value
    return sliced


def _enum_values(node: dict[str, Any]) -> list[Any] | None:
    values = node.get("enum")
    if isinstance(values, list):
        return values
    if "const" in node:
        return [node["const"]]
    return None


def _type_direction(before: str, after: str) -> str:
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
