"""Numeric and size bounds as the values they admit, so that bounds spelled differently compare equal."""

from __future__ import annotations

import math
from typing import Any

from watcher.contract.schema_diff.vocabulary import LOWER_BOUNDS, UPPER_BOUNDS

MAX_SAFE_INTEGER = 2**53 - 1
"""JavaScript's Number.MAX_SAFE_INTEGER: zod and others emit it as the bound of "any int"."""


_NUMERIC_BOUNDS = frozenset({"maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"})


def raw_bounds(node: dict[str, Any]) -> dict[str, Any]:
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
        if integer and is_number(exclusive):
            as_inclusive = math.ceil(exclusive) - 1 if sign == 1 else math.floor(exclusive) + 1
            if not is_number(inclusive):
                inclusive = as_inclusive
            else:
                inclusive = min(inclusive, as_inclusive) if sign == 1 else max(inclusive, as_inclusive)
            exclusive = None
        if integer and is_number(inclusive):
            inclusive = math.floor(inclusive) if sign == 1 else math.ceil(inclusive)
        for key, value in ((name, inclusive), (ex_name, exclusive)):
            if value is None:
                continue
            if is_number(value) and value * sign >= MAX_SAFE_INTEGER:
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


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
