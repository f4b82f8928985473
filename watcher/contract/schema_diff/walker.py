"""The walk over both schema trees: resolution, union variants and their pairing by containment."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from watcher.contract.patterns import pattern_direction
from watcher.contract.schema_diff.bounds import effective_bounds, raw_bounds
from watcher.contract.schema_diff.canonical import join, json_equal, strip_titles
from watcher.contract.schema_diff.keywords import KeywordComparisons
from watcher.contract.schema_diff.shapes import (
    Doc,
    bool_key,
    is_union,
    keyed_variants,
    merge_object_members,
    no_op,
    type_direction,
    type_key,
    type_slice,
)
from watcher.contract.schema_diff.strings import is_string_node, refuses_none, string_set
from watcher.contract.schema_diff.values import merge_values, needs_merging
from watcher.contract.schema_diff.vocabulary import (
    ANNOTATIONS,
    HANDLED,
    IGNORED,
    LOWER_BOUNDS,
    STRICT_WHEN_PRESENT,
    UPPER_BOUNDS,
    Fact,
    narrows,
)


def diff_schemas(before: Any, after: Any) -> list[Fact]:
    """Facts that turn schema `before` into `after` (both complete documents, `$defs` included)."""
    if json_equal(before, after):
        return []
    walker = Walker(Doc(before), Doc(after))
    walker.node(before, after, "", (), ())
    return walker.facts


class Walker(KeywordComparisons):
    """Both trees at once: `$ref`s and one-member `allOf`s resolved, unions split into variants keyed
    by type, variants paired across the versions; the keywords of two paired variants are compared
    by `KeywordComparisons`."""

    def __init__(self, doc_a: Doc, doc_b: Doc) -> None:
        self.a = doc_a
        self.b = doc_b
        self.facts: list[Fact] = []

    def mirrored(self) -> Walker:
        return Walker(self.b, self.a)

    @staticmethod
    def _resolve(doc: Doc, node: Any, stack: tuple[str, ...]) -> tuple[Any, tuple[str, ...]]:
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
                member, stack = Walker._resolve(doc, all_of[0], stack)
                node = {**member, **rest} if isinstance(member, dict) else member
                continue
            if isinstance(all_of, list) and len(all_of) > 1:
                merged = merge_object_members(node, [Walker._resolve(doc, m, stack)[0] for m in all_of])
                if merged is not None:
                    node = merged
                    continue
            return node, stack
        return node, stack

    def _variants(
        self, doc: Doc, node: Any, stack: tuple[str, ...]
    ) -> tuple[str | None, dict[str, tuple[Any, tuple[str, ...]]]]:
        """Split a resolved node into {type key: (variant schema, ref stack)}, and name the union keyword."""
        if not isinstance(node, dict):
            return None, {bool_key(node): ({} if node is True else node, stack)}
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
                _, inner = self._variants(doc, resolved, member_stack) if is_union(resolved) else (None, {})
                if inner:
                    raw_members.extend((v, s, None) for v, s in inner.values())
                else:
                    raw_members.append((resolved, member_stack, ref_name or None))
            return union_kw, keyed_variants(raw_members, in_union=True)
        types = node.get("type")
        if isinstance(types, list) and len(types) != 1:
            slices = [type_slice(node, t) for t in types if isinstance(t, str)]
            split = [(piece, stack, None) for piece in slices if piece is not None]
            return "type", keyed_variants(split, in_union=True)
        if isinstance(types, list):
            node = {**node, "type": types[0]}
        # Annotations of a plain node were compared by the caller, at the node's own path.
        variant = {k: v for k, v in node.items() if k not in ANNOTATIONS and not k.startswith("x-")}
        return None, {type_key(variant, in_union=False): (variant, stack)}

    def node(self, a: Any, b: Any, path: str, stack_a: tuple[str, ...], stack_b: tuple[str, ...]) -> None:
        a, stack_a = self._resolve(self.a, a, stack_a)
        b, stack_b = self._resolve(self.b, b, stack_b)
        if a is b and not stack_a and not stack_b:
            return
        self._annotations(a if isinstance(a, dict) else {}, b if isinstance(b, dict) else {}, path)
        kw_a, va = self._variants(self.a, a, stack_a)
        kw_b, vb = self._variants(self.b, b, stack_b)
        if (kw_a or kw_b) and needs_merging(va, vb):
            merged_a, merged_b = merge_values(va), merge_values(vb)
            va, vb = merged_a.variants, merged_b.variants
            self._value_notes(merged_a.notes, merged_b.notes, join(path, kw_b or kw_a or "anyOf"))
        if len(va) == 1 and len(vb) == 1 and kw_a is None and kw_b is None:
            (ka, (xa, sa)), (kb, (xb, sb)) = next(iter(va.items())), next(iter(vb.items()))
            if ka == kb:
                self.variant(xa, xb, path, sa, sb)
                return
            direction = type_direction(ka, kb)
            self.emit(Fact("type", join(path, "type"), ka, kb, direction, "type"))
            if {ka, kb} == {"integer", "number"}:
                self.variant(xa, xb, path, sa, sb)
            return
        union_kw = kw_b or kw_a or "anyOf"
        pairs, removed, added = self._pair_variants(va, vb)
        for k_old, k_new in pairs:
            member_path = join(path, f"{union_kw}[{k_old}]")
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
                self.emit(Fact("enum", join(path, union_kw), before_keys, after_keys, direction, union_kw, tuple(keys)))
            elif "any" in keys and direction == "widened":
                self.emit(Fact("type", join(path, union_kw), before_keys, after_keys, "widened", union_kw))
            else:
                self.emit(Fact("type", join(path, union_kw), before_keys, after_keys, direction, union_kw, tuple(keys)))

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
        probe = Walker(self.a, self.b)
        probe.node(a[0], b[0], "", a[1], b[1])
        return None if any(narrows(fact) for fact in probe.facts) else probe.facts

    def _value_notes(self, a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], path: str) -> None:
        """The annotations of merged value members, compared value by value (a description given to one value)."""
        for value in sorted(set(a) | set(b)):
            self._annotations(a.get(value, {}), b.get(value, {}), f"{path}[const:{value}]")

    def _annotations(self, a: dict[str, Any], b: dict[str, Any], path: str) -> None:
        for key in sorted(set(a) | set(b)):
            if key in ANNOTATIONS or key.startswith("x-"):
                before, after = a.get(key), b.get(key)
                if not json_equal(before, after):
                    self.emit(Fact("annotation", join(path, key), before, after, keyword=key))

    def variant(self, a: Any, b: Any, path: str, stack_a: tuple[str, ...], stack_b: tuple[str, ...]) -> None:
        """Compare two variants of the same type key."""
        if not isinstance(a, dict) or not isinstance(b, dict):
            if not json_equal(a, b):
                self.emit(Fact("type", join(path, "type"), bool_key(a), bool_key(b), "changed", "type"))
            return
        # Union members carry their own annotations; single-variant nodes had theirs compared already.
        self._annotations(a, b, path)
        own_keywords_from = len(self.facts)
        self._enum(a, b, path)
        bounds_a, bounds_b = effective_bounds(a), effective_bounds(b)
        for key in sorted((set(bounds_a) | set(bounds_b)) & (UPPER_BOUNDS | LOWER_BOUNDS)):
            self._bound(key, bounds_a.get(key), bounds_b.get(key), path)
        raw_a, raw_b = raw_bounds(a), raw_bounds(b)
        if bounds_a == bounds_b and not json_equal(raw_a, raw_b):
            # Spelled differently, admitting the same values: a note, never a narrowing.
            self.emit(Fact("constraint", join(path, "bounds"), raw_a, raw_b, "equivalent", "bounds"))
        for key in sorted((set(a) | set(b)) & STRICT_WHEN_PRESENT):
            before, after = a.get(key), b.get(key)
            if not json_equal(before, after):
                if after is None:
                    direction = "widened"
                elif key == "pattern" and isinstance(before, str) and isinstance(after, str):
                    direction = pattern_direction(before, after)
                else:
                    direction = "narrowed"
                self.emit(Fact("constraint", join(path, key), before, after, direction, key))
        if is_string_node(a) and is_string_node(b):
            self._judge_in_view(a, b, path, own_keywords_from)
        self._multiple_of(a.get("multipleOf"), b.get("multipleOf"), path)
        if bool(a.get("uniqueItems")) != bool(b.get("uniqueItems")):
            direction = "narrowed" if b.get("uniqueItems") else "widened"
            self.emit(
                Fact(
                    "constraint",
                    join(path, "uniqueItems"),
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
            before, after = no_op(key, a.get(key)), no_op(key, b.get(key))
            if not json_equal(strip_titles(before), strip_titles(after)):
                self.emit(
                    Fact("constraint", join(path, key), strip_titles(before), strip_titles(after), "changed", key)
                )

    def _judge_in_view(self, a: dict[str, Any], b: dict[str, Any], path: str, start: int) -> None:
        """Re-judge the string keywords' facts (from `start` on) with the other keywords in view: a change of
        minLength, maxLength, pattern, enum or const narrows only when some string the old node accepted (all
        its keywords, format read as the set it names) is refused by the new keyword, and widens only when the
        old keyword refused some string the new node accepts. A change that does neither is dropped."""
        judged = self.facts[start:]
        del self.facts[start:]
        old_strings = new_strings = None
        for fact in judged:
            keyword = fact.keyword or ""
            if keyword not in IN_VIEW or fact.path != join(path, keyword) or fact.direction not in _OPEN_DIRECTIONS:
                self.emit(fact)
                continue
            narrowed = fact.direction != "widened"
            widened = fact.direction != "narrowed"
            if narrowed:
                old_strings = old_strings or string_set(a)
                narrowed = not refuses_none(old_strings, keyword, b)
            if widened:
                new_strings = new_strings or string_set(b)
                widened = not refuses_none(new_strings, keyword, a)
            if narrowed and widened:
                self.emit(fact)
            elif narrowed or widened:
                self.emit(replace(fact, direction="narrowed" if narrowed else "widened"))


IN_VIEW = frozenset({"minLength", "maxLength", "pattern", "enum", "const"})
"""The string keywords judged with the others of their node in view."""

_OPEN_DIRECTIONS = frozenset({"narrowed", "widened", "changed", "unknown"})
