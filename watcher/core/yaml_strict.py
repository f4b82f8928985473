"""The one YAML reader of the watcher: PyYAML's safe loader held to a tree of plain values.

- **No anchors and no aliases** (`&a`, `*a`): refused where they appear, before anything is built. An alias
  makes one node many: `servers: &a [*a]` (17 bytes) is a list that holds itself, and nine levels of nine
  aliases (under 400 bytes) are 9**9 values for every walk over the document.
- **Caps**: nesting depth and node count are counted while the document is composed (the composer recurses
  per level, so the depth is refused before Python's own stack runs out).
- **Unique keys**: a mapping key given twice is refused (PyYAML keeps the last one silently, so a second
  ``teams:`` would replace the first); `<<:` merges may still be overridden by explicit keys.
- **Lines**: every key and item's line, and a date-shaped value that is no date (2027-13-01) named with its
  line (PyYAML fails there without one).

Errors are `YamlRefused`, a `MarkedYAMLError` whose problem names what was refused and whose mark gives the
line; `watcher.core.untrusted` and `watcher.core.configfile` turn them into file:line messages.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import yaml

_MERGE = "tag:yaml.org,2002:merge"
Lines = dict[tuple[str | int, ...], int]


@dataclass(frozen=True)
class YamlLimits:
    max_depth: int = 64
    """Nested collections, the document's own included."""
    max_nodes: int = 50_000
    """Scalars, lists and mappings (keys included); with aliases, counted as every alias expands."""
    aliases: bool = False
    """Only for the operator's own configuration (tools such as PyYAML's dump write anchors): aliases are
    then taken, a document that holds itself is refused, and the caps hold for the expanded document."""


class YamlRefused(yaml.MarkedYAMLError):
    """A document this reader does not take (an alias, an anchor, past a cap, a bad date)."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem=problem, problem_mark=mark)


class DuplicateKeyError(YamlRefused):
    def __init__(self, key: Any, first_line: int, mark: yaml.Mark) -> None:
        super().__init__(f"duplicate key {key!r} (first given on line {first_line}); each key may appear once", mark)
        self.key = key
        self.first_line = first_line


class UniqueKeyLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: dict[Any, int] = {}
        for key_node, _value in node.value:
            if key_node.tag == _MERGE:
                continue  # `<<:` merges may be overridden by explicit keys, as YAML intends
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                continue  # SafeLoader reports unhashable keys itself
            if key in seen:
                raise DuplicateKeyError(key, seen[key], key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


class _TreeLoader(UniqueKeyLoader):
    """Composes a tree only: every node is checked as it is composed, before its children are."""

    def __init__(self, text: str, limits: YamlLimits) -> None:
        super().__init__(text)
        self._limits = limits
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if self._limits.aliases:
            return super().compose_node(parent, index)  # checked as expanded, once composed (`_expanded`)
        if isinstance(event, yaml.AliasEvent):
            raise YamlRefused(
                f"an alias (*{event.anchor}) is refused: anchors and aliases are not read here; write the value out",
                event.start_mark,
            )
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise YamlRefused(
                f"an anchor (&{anchor}) is refused: anchors and aliases are not read here; write the value out",
                event.start_mark,
            )
        self._nodes += 1
        if self._nodes > self._limits.max_nodes:
            raise YamlRefused(f"more than {self._limits.max_nodes:,} values; refused", event.start_mark)
        nested = isinstance(event, yaml.CollectionStartEvent)
        if nested:
            self._depth += 1
            if self._depth > self._limits.max_depth:
                raise YamlRefused(f"nested deeper than {self._limits.max_depth} levels; refused", event.start_mark)
        try:
            return super().compose_node(parent, index)
        finally:
            if nested:
                self._depth -= 1


def parse(text: str, limits: YamlLimits) -> tuple[Any, Lines]:
    """The document (None when empty) and the line of every key and item. Raises yaml.YAMLError."""
    loader = _TreeLoader(text, limits)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        if limits.aliases:
            _expanded(node, limits, 1, {}, set())
        lines: Lines = {}
        _index_lines(node, (), lines)
        _check_dates(node, ())
        return loader.construct_document(node), lines
    finally:
        loader.dispose()


def _expanded(node: yaml.Node, limits: YamlLimits, depth: int, sizes: dict[int, int], path: set[int]) -> int:
    """How many values `node` stands for with every alias expanded (each shared node counted once per use,
    its size remembered); refused when it holds itself, nests past the depth cap or passes the node cap."""
    if id(node) in path:
        raise YamlRefused("an alias refers to a value that holds it; refused", node.start_mark)
    if depth > limits.max_depth:
        raise YamlRefused(f"nested deeper than {limits.max_depth} levels (aliases expanded); refused", node.start_mark)
    if id(node) in sizes:
        return sizes[id(node)]
    children: list[yaml.Node] = []
    if isinstance(node, yaml.MappingNode):
        children = [part for pair in node.value for part in pair]
    elif isinstance(node, yaml.SequenceNode):
        children = list(node.value)
    path.add(id(node))
    total = 1
    for child in children:
        total += _expanded(child, limits, depth + 1, sizes, path)
        if total > limits.max_nodes:
            raise YamlRefused(f"more than {limits.max_nodes:,} values (aliases expanded); refused", node.start_mark)
    path.discard(id(node))
    sizes[id(node)] = total
    return total


def _check_dates(node: yaml.Node, loc: tuple[str | int, ...]) -> None:
    """A date-shaped value that is no date (2027-13-01) fails in the YAML library without a line: name it."""
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:timestamp":
        try:
            yaml.SafeLoader("").construct_yaml_timestamp(node)
        except ValueError as exc:
            key = ".".join(str(part) for part in loc)
            raise YamlRefused(f"{key}: {node.value!r} is not a valid date: {exc}", node.start_mark) from exc
    elif isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            _check_dates(value_node, (*loc, key_node.value))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _check_dates(item, (*loc, index))


def _index_lines(node: yaml.Node, loc: tuple[str | int, ...], out: Lines) -> None:
    out[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlRefused("a mapping key must be a single value, not a list or a mapping", key_node.start_mark)
            key = key_node.value
            _index_lines(value_node, (*loc, key), out)
            out[(*loc, key)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, (*loc, i), out)


__all__ = ["DuplicateKeyError", "Lines", "UniqueKeyLoader", "YamlLimits", "YamlRefused", "parse"]
