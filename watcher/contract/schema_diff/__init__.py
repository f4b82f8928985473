"""Structural diff of two JSON Schema (2020-12) documents, with JSON paths.

The first step of classifying a schema change: this package knows JSON Schema, not MCP. It walks both
trees at once, resolving local `$ref`s (pydantic's `$defs`), splitting unions (`anyOf` / `oneOf`,
`type` lists, nullable `X | null`) into variants keyed by type, and records each difference as a
`Fact` that says which way it goes ("fewer values are accepted here"). The input_schema and
output_schema rule families (`watcher.contract.rules`) turn facts into named changes; the same fact
means different things for what a client sends and what it receives.

Not changes: key order, `title` (generators add it to every node), `$schema` / `$id`, the place a
subschema lives (`$defs` vs inline), the order of `required`, `enum` or union members, the spelling of a
set of values (`enum` or a union of `const`s), a string keyword that refuses nothing the node's other
keywords did not already refuse.

- `walker`: `diff_schemas` and the walk (resolution, union variants, their pairing by containment, string
  keywords re-judged with the others of their node in view)
- `keywords`: the comparisons of two paired variants, keyword by keyword
- `values`: value members (`enum`, `const`, `anyOf` / `oneOf` of `const`) merged when the sides spell them
  differently, so that value sets are compared
- `strings`: the strings a node accepts, all its keywords in view (`format` read as the set it names), and
  whether another node's keyword refuses any of them
- `shapes`: a node's type key, type slices, enum values, mergeable `allOf`, the `$ref` document
- `bounds`: bounds as the values they admit; `canonical`: JSON equality, canonical text, paths
- `vocabulary`: the keyword sets and `Fact`
"""

from __future__ import annotations

from watcher.contract.schema_diff.bounds import MAX_SAFE_INTEGER, effective_bounds
from watcher.contract.schema_diff.canonical import canonical, json_equal, segment, strip_titles
from watcher.contract.schema_diff.shapes import admits_unknown_keys
from watcher.contract.schema_diff.vocabulary import (
    ANNOTATIONS,
    HANDLED,
    IGNORED,
    LOWER_BOUNDS,
    STRICT_WHEN_PRESENT,
    TYPE_KEYWORDS,
    UPPER_BOUNDS,
    Fact,
    narrows,
)
from watcher.contract.schema_diff.walker import diff_schemas

__all__ = [
    "ANNOTATIONS",
    "HANDLED",
    "IGNORED",
    "LOWER_BOUNDS",
    "MAX_SAFE_INTEGER",
    "STRICT_WHEN_PRESENT",
    "TYPE_KEYWORDS",
    "UPPER_BOUNDS",
    "Fact",
    "admits_unknown_keys",
    "canonical",
    "diff_schemas",
    "effective_bounds",
    "json_equal",
    "narrows",
    "segment",
    "strip_titles",
]
