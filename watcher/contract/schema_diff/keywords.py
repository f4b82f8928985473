"""Per-keyword comparisons of two variants of the same type: enum and const, bounds, multipleOf,
properties and required, additional/unevaluated properties, items, allOf.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from watcher.contract.schema_diff.bounds import is_number
from watcher.contract.schema_diff.canonical import canonical, join, json_equal, segment, strip_titles
from watcher.contract.schema_diff.shapes import Doc, admits_unknown_keys, covers_type, enum_values, json_type
from watcher.contract.schema_diff.vocabulary import UPPER_BOUNDS, Fact


class KeywordComparisons(ABC):
    """The comparisons of two variants of the same type, keyword by keyword (or a few that go together),
    each recording `Fact`s; subschemas go back to the walker (`node`)."""

    a: Doc
    b: Doc
    facts: list[Fact]

    def emit(self, fact: Fact) -> None:
        self.facts.append(fact)

    @abstractmethod
    def node(self, a: Any, b: Any, path: str, stack_a: tuple[str, ...], stack_b: tuple[str, ...]) -> None:
        """Compare two subschemas at `path`."""

    @abstractmethod
    def contained(self, a: tuple[Any, tuple[str, ...]], b: tuple[Any, tuple[str, ...]]) -> bool:
        """Whether every value variant `a` accepts is accepted by variant `b`."""

    @abstractmethod
    def mirrored(self) -> KeywordComparisons:
        """The same comparisons from the new document to the old one."""

    def _enum(self, a: dict[str, Any], b: dict[str, Any], path: str) -> None:
        values_a = _restricting_values(a)
        values_b = _restricting_values(b)
        if values_a is None and values_b is None:
            return
        keyword = "enum" if "enum" in a or "enum" in b else "const"
        where = join(path, keyword)
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
        where = join(path, key)
        if before is None:
            direction = "narrowed"
        elif after is None:
            direction = "widened"
        elif is_number(before) and is_number(after):
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
        elif is_number(before) and is_number(after) and before and after and (after / before).is_integer():
            direction = "narrowed"
        elif is_number(before) and is_number(after) and before and after and (before / after).is_integer():
            direction = "widened"
        else:
            direction = "changed"
        self.emit(Fact("constraint", join(path, "multipleOf"), before, after, direction, "multipleOf"))

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
        required_path = join(path, "required")
        new_required = sorted(n for n in names_b - names_a if n in set_req_b)
        if new_required:
            self._required_facts("required_added", required_path, req_a, req_b, new_required, props_b)
        for name in sorted(names_b - names_a):
            schema = strip_titles(props_b.get(name, {}))
            detail = "required" if name in set_req_b else "optional"
            self.emit(
                Fact(
                    "property_added",
                    join(join(path, "properties"), segment(name)),
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
                    join(join(path, "properties"), segment(name)),
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
                    join(join(path, "properties"), segment(name)),
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
    def _member_names(doc: Doc, node: dict[str, Any]) -> set[str]:
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
        where = join(path, key)
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
                        join(path, "items"),
                        strip_titles(items_a),
                        strip_titles(items_b),
                        direction,
                        "items",
                    )
                )
            else:
                self.node(items_a, items_b, join(path, "items"), stack_a, stack_b)
        prefix_a, prefix_b = a.get("prefixItems") or [], b.get("prefixItems") or []
        if isinstance(prefix_a, list) and isinstance(prefix_b, list):
            for index in range(min(len(prefix_a), len(prefix_b))):
                self.node(prefix_a[index], prefix_b[index], join(path, f"prefixItems[{index}]"), stack_a, stack_b)
            if len(prefix_a) != len(prefix_b):
                self.emit(
                    Fact(
                        "constraint", join(path, "prefixItems"), len(prefix_a), len(prefix_b), "changed", "prefixItems"
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
        narrowed = all(any(self.mirrored().contained(new, (m, stack_a)) for new in parts_b) for m in members_a)
        where = join(path, "allOf")
        if widened and narrowed:
            return
        direction = "widened" if widened else "narrowed" if narrowed else "changed"
        self.emit(Fact("constraint", where, strip_titles(members_a), strip_titles(members_b), direction, "allOf"))


def _restricting_values(node: dict[str, Any]) -> list[Any] | None:
    """The node's enum / const values, or None when it has none or they list every value of its type
    (`{type: null, const: null}` accepts what `{type: null}` does)."""
    values = enum_values(node)
    if not values:
        return values
    declared = node.get("type")
    kinds = {json_type(v) for v in values}
    type_name = declared if isinstance(declared, str) else kinds.pop() if len(kinds) == 1 else None
    return None if type_name is not None and covers_type(values, type_name) else values
