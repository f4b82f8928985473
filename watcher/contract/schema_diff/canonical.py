"""JSON values compared and shown: equality as JSON means it, one canonical text, report paths."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from watcher.contract.schema_diff.vocabulary import IGNORED

_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9_$@-]+")


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


def join(path: str, part: str) -> str:
    if not path:
        return part
    return f"{path}{part}" if part.startswith("[") else f"{path}.{part}"
