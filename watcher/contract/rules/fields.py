"""Family `fields`: any other field of a list entry (icons, size, a resource's name, `execution`…).
Reported so that nothing goes unseen; no rule claims to know its effect."""

from __future__ import annotations

from collections.abc import Iterator

from watcher.contract.rules.base import Change, Compared, Rule, make_change
from watcher.contract.schema_diff import json_equal

FAMILY = "fields"
FIELD_CHANGED = Rule(
    id="field_changed",
    family=FAMILY,
    doc="Another field of an entry changed (icons, size, a resource's name…); shown for review, not graded.",
    breaks_clients=False,
    affects_models=False,
)

RULES = (FIELD_CHANGED,)

_RESOURCE_FIELDS = frozenset({"uri", "uriTemplate", "title", "description", "annotations", "mimeType"})
_COMPARED_BY_OTHER_FAMILIES: dict[str, frozenset[str]] = {
    "tools": frozenset({"name", "title", "description", "annotations", "inputSchema", "outputSchema"}),
    "prompts": frozenset({"name", "title", "description", "arguments"}),
    "resources": _RESOURCE_FIELDS,
    "resource-templates": _RESOURCE_FIELDS,
}
"""Per list, the entry fields another family already compares. `_meta` is delivery detail, never compared."""


def check(compared: Compared) -> Iterator[Change]:
    if not compared.both_sides:
        return
    before, after = compared.before, compared.after
    skip = _COMPARED_BY_OTHER_FAMILIES.get(compared.list_name, frozenset()) | {"_meta"}
    for key in sorted((set(before) | set(after)) - skip):
        if not json_equal(before.get(key), after.get(key)):
            yield make_change(FIELD_CHANGED, compared.list_name, compared.name, key, before.get(key), after.get(key))
