"""Family `resources`: resources (keyed by uri) and resource templates (keyed by uriTemplate).

A URI that changed under the same resource name is one `uri_changed`, not a removal plus an
addition; the same for a template's uriTemplate.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules.base import Rule, make_change
from watcher.contract.rules.fields import check_other_fields
from watcher.contract.rules.text import check_annotations, check_text
from watcher.contract.schema_diff import json_equal

F = "resources"
URI_CHANGED = Rule(
    "uri_changed",
    F,
    "A resource kept its name but moved to another URI: clients that stored the URI no longer find it.",
    True,
    False,
)
URI_TEMPLATE_CHANGED = Rule(
    "uri_template_changed",
    F,
    "A resource template kept its name but its uriTemplate changed: URIs built from the old template fail.",
    True,
    False,
)
MIME_TYPE_CHANGED = Rule(
    "mime_type_changed",
    F,
    "A resource's or template's mimeType changed: clients decode the content the old way.",
    True,
    False,
)

RULES = (URI_CHANGED, URI_TEMPLATE_CHANGED, MIME_TYPE_CHANGED)
_HANDLED = ("uri", "uriTemplate", "title", "description", "annotations", "mimeType")


def pair_moved(
    key_field: str, removed: dict[str, dict[str, Any]], added: dict[str, dict[str, Any]]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Pairs (old, new) of entries with the same unique `name` whose key changed; removes them from both maps."""

    def unique_names(entries: dict[str, dict[str, Any]]) -> dict[str, str]:
        by_name: dict[str, list[str]] = {}
        for key, entry in entries.items():
            if isinstance(entry.get("name"), str):
                by_name.setdefault(entry["name"], []).append(key)
        return {name: keys[0] for name, keys in by_name.items() if len(keys) == 1}

    old_names, new_names = unique_names(removed), unique_names(added)
    pairs = []
    for name in sorted(set(old_names) & set(new_names)):
        pairs.append((removed.pop(old_names[name]), added.pop(new_names[name])))
    return pairs


def compare_resource(list_name: str, before: dict[str, Any], after: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """One resource (list "resources") or template (list "resource-templates"), matched by key or moved."""
    key_field = "uri" if list_name == "resources" else "uriTemplate"
    name = str(before.get(key_field))
    if not json_equal(before.get(key_field), after.get(key_field)):
        rule = URI_CHANGED if list_name == "resources" else URI_TEMPLATE_CHANGED
        yield make_change(
            rule,
            list_name,
            name,
            key_field,
            before.get(key_field),
            after.get(key_field),
            f"same name {after.get('name')!r}",
        )
    if not json_equal(before.get("mimeType"), after.get("mimeType")):
        yield make_change(MIME_TYPE_CHANGED, list_name, name, "mimeType", before.get("mimeType"), after.get("mimeType"))
    yield from check_text(list_name, name, before, after)
    yield from check_annotations(list_name, name, before.get("annotations"), after.get("annotations"))
    yield from check_other_fields(list_name, name, before, after, _HANDLED)
