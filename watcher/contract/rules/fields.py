"""Family `fields`: any other field of a list entry (icons, size, name of a resource, `execution`…).
Reported so that nothing goes unseen; no rule claims to know its effect."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from watcher.contract.rules.base import Rule, make_change
from watcher.contract.schema_diff import json_equal

FIELD_CHANGED = Rule(
    "field_changed",
    "fields",
    "Another field of an entry changed (icons, size, a resource's name…); shown for review, not graded.",
    False,
    False,
)

RULES = (FIELD_CHANGED,)


def check_other_fields(
    list_name: str, name: str, before: dict[str, Any], after: dict[str, Any], handled: Iterable[str]
) -> Iterator[dict[str, Any]]:
    skip = set(handled) | {"_meta"}
    for key in sorted((set(before) | set(after)) - skip):
        if not json_equal(before.get(key), after.get(key)):
            yield make_change(FIELD_CHANGED, list_name, name, key, before.get(key), after.get(key))
