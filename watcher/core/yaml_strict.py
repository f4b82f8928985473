"""A PyYAML safe loader that refuses a mapping key given twice (YAML says keys are unique; PyYAML keeps
the last one silently, so a second ``teams:`` would replace the first)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import yaml

_MERGE = "tag:yaml.org,2002:merge"


class DuplicateKeyError(yaml.MarkedYAMLError):
    def __init__(self, key: Any, first_line: int, mark: yaml.Mark) -> None:
        super().__init__(
            problem=f"duplicate key {key!r} (first given on line {first_line}); each key may appear once",
            problem_mark=mark,
        )
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
