"""Family `resources`: resources (keyed by uri) and resource templates (keyed by uriTemplate).

A URI that changed under the same resource name is one `uri_changed`, not a removal plus an
addition (the diff pairs such entries before calling `check`); the same for a template's uriTemplate.
"""

from __future__ import annotations

from collections.abc import Iterator

from watcher.contract.rules.base import Change, Compared, Rule, make_change
from watcher.contract.schema_diff import json_equal

FAMILY = "resources"
URI_CHANGED = Rule(
    id="uri_changed",
    family=FAMILY,
    doc="A resource kept its name but moved to another URI: clients that stored the URI no longer find it.",
    breaks_clients=True,
    affects_models=False,
)
URI_TEMPLATE_CHANGED = Rule(
    id="uri_template_changed",
    family=FAMILY,
    doc="A resource template kept its name but its uriTemplate changed: URIs built from the old template fail.",
    breaks_clients=True,
    affects_models=False,
)
MIME_TYPE_CHANGED = Rule(
    id="mime_type_changed",
    family=FAMILY,
    doc="A resource's or template's mimeType changed: clients decode the content the old way.",
    breaks_clients=True,
    affects_models=False,
)

RULES = (URI_CHANGED, URI_TEMPLATE_CHANGED, MIME_TYPE_CHANGED)


def check(compared: Compared) -> Iterator[Change]:
    """Compare one resource (list "resources") or template (list "resource-templates"): matched by its
    key, or by its unique name when the key moved. Title, description and annotations are the text
    family's; other fields the fields family's."""
    if not compared.both_sides:
        return
    before, after = compared.before, compared.after
    list_name, name = compared.list_name, compared.name
    key_field = "uri" if list_name == "resources" else "uriTemplate"
    if not json_equal(before.get(key_field), after.get(key_field)):
        rule = URI_CHANGED if list_name == "resources" else URI_TEMPLATE_CHANGED
        hint = f"same name {after.get('name')!r}"
        yield make_change(rule, list_name, name, key_field, before.get(key_field), after.get(key_field), hint)
    if not json_equal(before.get("mimeType"), after.get("mimeType")):
        yield make_change(MIME_TYPE_CHANGED, list_name, name, "mimeType", before.get("mimeType"), after.get("mimeType"))
