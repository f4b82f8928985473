"""Family `prompts`: a prompt's arguments (prompts/get sends them as strings, by name)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules import text
from watcher.contract.rules.base import Change, Compared, Rule, make_change
from watcher.contract.rules.fields import FIELD_CHANGED
from watcher.contract.schema_diff import json_equal, segment

FAMILY = "prompts"
PROMPT_REQUIRED_ARGUMENT_ADDED = Rule(
    id="prompt_required_argument_added",
    family=FAMILY,
    doc="A new required prompt argument: prompts/get without it fails.",
    breaks_clients=True,
    affects_models=False,
)
PROMPT_OPTIONAL_ARGUMENT_ADDED = Rule(
    id="prompt_optional_argument_added",
    family=FAMILY,
    doc="A new optional prompt argument.",
    breaks_clients=False,
    affects_models=False,
)
PROMPT_ARGUMENT_REMOVED = Rule(
    id="prompt_argument_removed",
    family=FAMILY,
    doc="A prompt argument is gone (or renamed): callers that send it may be rejected or ignored.",
    breaks_clients=True,
    affects_models=False,
)
PROMPT_ARGUMENT_BECAME_REQUIRED = Rule(
    id="prompt_argument_became_required",
    family=FAMILY,
    doc="An optional prompt argument became required.",
    breaks_clients=True,
    affects_models=False,
)
PROMPT_ARGUMENT_BECAME_OPTIONAL = Rule(
    id="prompt_argument_became_optional",
    family=FAMILY,
    doc="A required prompt argument became optional.",
    breaks_clients=False,
    affects_models=False,
)

RULES = (
    PROMPT_REQUIRED_ARGUMENT_ADDED,
    PROMPT_OPTIONAL_ARGUMENT_ADDED,
    PROMPT_ARGUMENT_REMOVED,
    PROMPT_ARGUMENT_BECAME_REQUIRED,
    PROMPT_ARGUMENT_BECAME_OPTIONAL,
)
_ARGUMENT_FIELDS_COMPARED_ABOVE = frozenset({"name", "required", "title", "description"})


def check(compared: Compared) -> Iterator[Change]:
    """Compare a prompt's arguments: added, removed, required or not, their text and other fields.
    The prompt's own title, description and other fields are compared by the text and fields families."""
    if not compared.both_sides:
        return
    list_name, name = compared.list_name, compared.name
    args_a, args_b = _arguments(compared.before), _arguments(compared.after)
    for arg in sorted(set(args_b) - set(args_a)):
        rule = PROMPT_REQUIRED_ARGUMENT_ADDED if args_b[arg].get("required") else PROMPT_OPTIONAL_ARGUMENT_ADDED
        yield make_change(rule, list_name, name, f"arguments.{segment(arg)}", None, args_b[arg])
    for arg in sorted(set(args_a) - set(args_b)):
        yield make_change(PROMPT_ARGUMENT_REMOVED, list_name, name, f"arguments.{segment(arg)}", args_a[arg], None)
    for arg in sorted(set(args_a) & set(args_b)):
        a, b = args_a[arg], args_b[arg]
        path = f"arguments.{segment(arg)}"
        if bool(a.get("required")) != bool(b.get("required")):
            rule = PROMPT_ARGUMENT_BECAME_REQUIRED if b.get("required") else PROMPT_ARGUMENT_BECAME_OPTIONAL
            yield make_change(rule, list_name, name, f"{path}.required", a.get("required"), b.get("required"))
        yield from text.check(Compared(list_name=list_name, name=name, before=a, after=b, path=path))
        for key in sorted((set(a) | set(b)) - _ARGUMENT_FIELDS_COMPARED_ABOVE):
            if not json_equal(a.get(key), b.get(key)):
                yield make_change(FIELD_CHANGED, list_name, name, f"{path}.{key}", a.get(key), b.get(key))


def _arguments(prompt: dict[str, Any]) -> dict[str, dict[str, Any]]:
    args = prompt.get("arguments") or []
    return {a["name"]: a for a in args if isinstance(a, dict) and isinstance(a.get("name"), str)}
