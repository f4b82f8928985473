"""Family `lists`: entries added to or removed from tools/list, prompts/list, resources/list and
resources/templates/list. Reported with kind `added` / `removed`, as in the seeds."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from watcher.contract.rules.base import Rule, make_change

F = "lists"
TOOL_ADDED = Rule(
    "tool_added",
    F,
    "A new tool: old clients never call it, but models must now choose among more tools.",
    False,
    True,
    kind="added",
)
TOOL_REMOVED = Rule(
    "tool_removed",
    F,
    "A tool is gone (or renamed): calls by its name fail, host settings naming it stop matching.",
    True,
    True,
    kind="removed",
)
PROMPT_ADDED = Rule("prompt_added", F, "A new prompt.", False, False, kind="added")
PROMPT_REMOVED = Rule(
    "prompt_removed", F, "A prompt is gone: prompts/get with its name fails.", True, False, kind="removed"
)
RESOURCE_ADDED = Rule("resource_added", F, "A new resource.", False, False, kind="added")
RESOURCE_REMOVED = Rule(
    "resource_removed",
    F,
    "A resource URI is gone: clients that stored it no longer find it.",
    True,
    False,
    kind="removed",
)
TEMPLATE_ADDED = Rule("resource_template_added", F, "A new resource template.", False, False, kind="added")
TEMPLATE_REMOVED = Rule(
    "resource_template_removed", F, "A resource template is gone: URIs built from it fail.", True, False, kind="removed"
)

RULES = (
    TOOL_ADDED,
    TOOL_REMOVED,
    PROMPT_ADDED,
    PROMPT_REMOVED,
    RESOURCE_ADDED,
    RESOURCE_REMOVED,
    TEMPLATE_ADDED,
    TEMPLATE_REMOVED,
)

_BY_LIST: dict[str, tuple[Rule, Rule]] = {
    "tools": (TOOL_ADDED, TOOL_REMOVED),
    "prompts": (PROMPT_ADDED, PROMPT_REMOVED),
    "resources": (RESOURCE_ADDED, RESOURCE_REMOVED),
    "resource-templates": (TEMPLATE_ADDED, TEMPLATE_REMOVED),
}


def check_entries(
    list_name: str, removed: Mapping[str, dict[str, Any]], added: Mapping[str, dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """Emit `added` / `removed` for entries present on one side only (keys: name, uri or uriTemplate)."""
    added_rule, removed_rule = _BY_LIST[list_name]
    for key in sorted(removed):
        hint = _rename_hint(list_name, key, removed[key], added) if list_name in ("tools", "prompts") else None
        yield make_change(removed_rule, list_name, key, None, hint=hint)
    for key in sorted(added):
        yield make_change(added_rule, list_name, key, None)


def _argument_names(list_name: str, entry: dict[str, Any]) -> frozenset[str]:
    if list_name == "tools":
        schema = entry.get("inputSchema")
        props = schema.get("properties") if isinstance(schema, dict) else None
        return frozenset(props) if isinstance(props, dict) else frozenset()
    args = entry.get("arguments") or []
    return frozenset(a.get("name") for a in args if isinstance(a, dict) and isinstance(a.get("name"), str))


def _rename_hint(list_name: str, key: str, entry: dict[str, Any], added: Mapping[str, dict[str, Any]]) -> str | None:
    """Name the added entry that most likely replaces a removed one: similar name or the same arguments."""
    if not added:
        return None
    old_args = _argument_names(list_name, entry)
    best: tuple[float, str] | None = None
    for candidate, new_entry in added.items():
        score = difflib.SequenceMatcher(None, key, candidate).ratio()
        if old_args and old_args == _argument_names(list_name, new_entry):
            score += 0.5
        if entry.get("description") and entry.get("description") == new_entry.get("description"):
            score += 0.5
        if best is None or score > best[0]:
            best = (score, candidate)
    assert best is not None
    if best[0] < 0.6:
        return None
    return f"likely renamed to {best[1]!r}; still breaking for clients that call {key!r}"
