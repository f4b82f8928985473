"""Family `lists`: entries added to or removed from tools/list, prompts/list, resources/list and
resources/templates/list. Reported with kind `added` / `removed` (the report's shape for list entries)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from watcher.contract.rules.base import Change, Compared, Rule, make_change

FAMILY = "lists"
TOOL_ADDED = Rule(
    id="tool_added",
    family=FAMILY,
    doc="A new tool: old clients never call it, but models must now choose among more tools.",
    breaks_clients=False,
    affects_models=True,
    kind="added",
)
TOOL_REMOVED = Rule(
    id="tool_removed",
    family=FAMILY,
    doc="A tool is gone (or renamed): calls by its name fail, host settings naming it stop matching.",
    breaks_clients=True,
    affects_models=True,
    kind="removed",
)
TOOL_REQUIRES_CAPABILITY = Rule(
    id="tool_requires_capability",
    family=FAMILY,
    doc="A tool is now offered only to clients that declare a capability (it is gone for a client that "
    "declares less, e.g. a script or a host without elicitation): calls by such clients fail.",
    breaks_clients=True,
    affects_models=True,
)
PROMPT_ADDED = Rule(
    id="prompt_added",
    family=FAMILY,
    doc="A new prompt.",
    breaks_clients=False,
    affects_models=False,
    kind="added",
)
PROMPT_REMOVED = Rule(
    id="prompt_removed",
    family=FAMILY,
    doc="A prompt is gone: prompts/get with its name fails.",
    breaks_clients=True,
    affects_models=False,
    kind="removed",
)
RESOURCE_ADDED = Rule(
    id="resource_added",
    family=FAMILY,
    doc="A new resource.",
    breaks_clients=False,
    affects_models=False,
    kind="added",
)
RESOURCE_REMOVED = Rule(
    id="resource_removed",
    family=FAMILY,
    doc="A resource URI is gone: clients that stored it no longer find it.",
    breaks_clients=True,
    affects_models=False,
    kind="removed",
)
TEMPLATE_ADDED = Rule(
    id="resource_template_added",
    family=FAMILY,
    doc="A new resource template.",
    breaks_clients=False,
    affects_models=False,
    kind="added",
)
TEMPLATE_REMOVED = Rule(
    id="resource_template_removed",
    family=FAMILY,
    doc="A resource template is gone: URIs built from it fail.",
    breaks_clients=True,
    affects_models=False,
    kind="removed",
)

RULES = (
    TOOL_ADDED,
    TOOL_REMOVED,
    TOOL_REQUIRES_CAPABILITY,
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


def check(compared: Compared) -> Iterator[Change]:
    """`added` / `removed` for the entries found on one side only: `compared.before` holds the removed
    ones and `compared.after` the added ones, each as {key: entry} (key: name, uri or uriTemplate)."""
    list_name = compared.list_name
    removed: Mapping[str, dict[str, Any]] = compared.before
    added: Mapping[str, dict[str, Any]] = compared.after
    added_rule, removed_rule = _BY_LIST[list_name]
    for key in sorted(removed):
        hint = _rename_hint(list_name, key, removed[key], added) if list_name in ("tools", "prompts") else None
        yield make_change(removed_rule, list_name, key, None, hint=hint)
    for key in sorted(added):
        yield make_change(added_rule, list_name, key, None)


def requires_capability(removed: Change, profile: str, richer: str, capabilities: list[str]) -> Change:
    """The `tool_removed` seen under client profile `profile`, restated: the candidate still offers the tool
    under profile `richer`, which declares `capabilities` on top."""
    hint = (
        f"still offered to clients declaring {', '.join(capabilities)} (profile {richer}); gone for clients "
        f"without (profile {profile})"
    )
    return Change(
        rule=TOOL_REQUIRES_CAPABILITY,
        list_name=removed.list_name,
        name=removed.name,
        path=None,
        before=None,
        after=capabilities,
        hint=hint,
        era=removed.era,
        profile=profile,
    )


def _argument_names(list_name: str, entry: dict[str, Any]) -> frozenset[str]:
    if list_name == "tools":
        schema = entry.get("inputSchema")
        props = schema.get("properties") if isinstance(schema, dict) else None
        return frozenset(props) if isinstance(props, dict) else frozenset()
    args = entry.get("arguments") or []
    return frozenset(a["name"] for a in args if isinstance(a, dict) and isinstance(a.get("name"), str))


def _rename_hint(list_name: str, key: str, entry: dict[str, Any], added: Mapping[str, dict[str, Any]]) -> str | None:
    """Name the added entry that may replace a removed one (similar name or the same arguments), as a hint."""
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
    # Only a hint: the renames family found too little evidence to pair the two (docs/contract-rules.md).
    return (
        f"perhaps replaced by {best[1]!r} (not paired as a rename: names and inputs agree too little); still "
        f"breaking for clients that call {key!r}"
    )
