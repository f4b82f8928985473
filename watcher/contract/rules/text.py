"""Family `text`: what the model reads — descriptions, titles, server instructions, tool annotations.
Nothing fails; the model may choose differently. These changes trigger an evaluation run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules.base import Rule, join_path, make_change
from watcher.contract.schema_diff import json_equal

F = "text"
DESCRIPTION_CHANGED = Rule(
    "description_changed",
    F,
    "A description (tool, prompt, resource, parameter or argument) changed: the model's main signal for choosing.",
    False,
    True,
)
TITLE_CHANGED = Rule("title_changed", F, "A display title changed; a host may pass it to the model too.", False, True)
INSTRUCTIONS_CHANGED = Rule(
    "instructions_changed",
    F,
    "The server's instructions changed; clients may add them to the system prompt.",
    False,
    True,
)
ANNOTATIONS_CHANGED = Rule(
    "annotations_changed",
    F,
    "A hint in `annotations` changed (readOnlyHint, destructiveHint, audience…); hosts may act on it.",
    False,
    True,
)

RULES = (DESCRIPTION_CHANGED, TITLE_CHANGED, INSTRUCTIONS_CHANGED, ANNOTATIONS_CHANGED)


def check_text(
    list_name: str, name: str, before: dict[str, Any], after: dict[str, Any], prefix: str = ""
) -> Iterator[dict[str, Any]]:
    """`title` and `description` of one entry (or of one prompt argument, under `prefix`)."""
    for key, rule in (("title", TITLE_CHANGED), ("description", DESCRIPTION_CHANGED)):
        if not json_equal(before.get(key), after.get(key)):
            yield make_change(rule, list_name, name, join_path(prefix, key), before.get(key), after.get(key))


def check_annotations(list_name: str, name: str, before: Any, after: Any) -> Iterator[dict[str, Any]]:
    """One change per annotation key that differs (absent counts as unset)."""
    before = before if isinstance(before, dict) else {}
    after = after if isinstance(after, dict) else {}
    for key in sorted(set(before) | set(after)):
        if not json_equal(before.get(key), after.get(key)):
            yield make_change(
                ANNOTATIONS_CHANGED, list_name, name, join_path("annotations", key), before.get(key), after.get(key)
            )
