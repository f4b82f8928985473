"""Family `text`: what the model reads — descriptions, titles, server instructions, tool and resource
annotations. No call fails; the model may choose differently, so these changes call for an evaluation run."""

from __future__ import annotations

from collections.abc import Iterator

from watcher.contract.rules.base import Change, Compared, Rule, join_path, make_change
from watcher.contract.schema_diff import json_equal

FAMILY = "text"
DESCRIPTION_CHANGED = Rule(
    id="description_changed",
    family=FAMILY,
    doc="A description (tool, prompt, resource, parameter or argument) changed: the model's main signal for choosing.",
    breaks_clients=False,
    affects_models=True,
)
TITLE_CHANGED = Rule(
    id="title_changed",
    family=FAMILY,
    doc="A display title changed; a host may pass it to the model too.",
    breaks_clients=False,
    affects_models=True,
)
INSTRUCTIONS_CHANGED = Rule(
    id="instructions_changed",
    family=FAMILY,
    doc="The server's instructions changed; clients may add them to the system prompt.",
    breaks_clients=False,
    affects_models=True,
)
ANNOTATIONS_CHANGED = Rule(
    id="annotations_changed",
    family=FAMILY,
    doc="A hint in `annotations` changed (readOnlyHint, destructiveHint, audience…); hosts may act on it.",
    breaks_clients=False,
    affects_models=True,
)

RULES = (DESCRIPTION_CHANGED, TITLE_CHANGED, INSTRUCTIONS_CHANGED, ANNOTATIONS_CHANGED)

_ANNOTATED_LISTS = frozenset({"tools", "resources", "resource-templates"})
"""The lists whose entries carry `annotations` in the MCP schema (prompts do not)."""


def check(compared: Compared) -> Iterator[Change]:
    """`title` and `description` of an entry (or of a prompt argument, under `compared.path`), and one
    change per differing key of an entry's `annotations` (an absent key counts as unset).
    Server instructions are compared by the server family."""
    if not compared.both_sides:
        return
    before, after = compared.before, compared.after
    for key, rule in (("title", TITLE_CHANGED), ("description", DESCRIPTION_CHANGED)):
        if not json_equal(before.get(key), after.get(key)):
            yield make_change(
                rule, compared.list_name, compared.name, join_path(compared.path, key), before.get(key), after.get(key)
            )
    if compared.path or compared.list_name not in _ANNOTATED_LISTS:
        return
    hints_a = before.get("annotations") if isinstance(before.get("annotations"), dict) else {}
    hints_b = after.get("annotations") if isinstance(after.get("annotations"), dict) else {}
    for key in sorted(set(hints_a) | set(hints_b)):
        if not json_equal(hints_a.get(key), hints_b.get(key)):
            yield make_change(
                ANNOTATIONS_CHANGED,
                compared.list_name,
                compared.name,
                join_path("annotations", key),
                hints_a.get(key),
                hints_b.get(key),
            )
