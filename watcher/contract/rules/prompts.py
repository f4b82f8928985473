"""Family `prompts`: a prompt's arguments (prompts/get sends them as strings, by name)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules.base import Rule, make_change
from watcher.contract.rules.fields import FIELD_CHANGED, check_other_fields
from watcher.contract.rules.text import check_text
from watcher.contract.schema_diff import json_equal, segment

F = "prompts"
PROMPT_REQUIRED_ARGUMENT_ADDED = Rule(
    "prompt_required_argument_added", F, "A new required prompt argument: prompts/get without it fails.", True, False
)
PROMPT_OPTIONAL_ARGUMENT_ADDED = Rule(
    "prompt_optional_argument_added", F, "A new optional prompt argument.", False, False
)
PROMPT_ARGUMENT_REMOVED = Rule(
    "prompt_argument_removed",
    F,
    "A prompt argument is gone (or renamed): callers that send it may be rejected or ignored.",
    True,
    False,
)
PROMPT_ARGUMENT_BECAME_REQUIRED = Rule(
    "prompt_argument_became_required", F, "An optional prompt argument became required.", True, False
)
PROMPT_ARGUMENT_BECAME_OPTIONAL = Rule(
    "prompt_argument_became_optional", F, "A required prompt argument became optional.", False, False
)

RULES = (
    PROMPT_REQUIRED_ARGUMENT_ADDED,
    PROMPT_OPTIONAL_ARGUMENT_ADDED,
    PROMPT_ARGUMENT_REMOVED,
    PROMPT_ARGUMENT_BECAME_REQUIRED,
    PROMPT_ARGUMENT_BECAME_OPTIONAL,
)


def _arguments(prompt: dict[str, Any]) -> dict[str, dict[str, Any]]:
    args = prompt.get("arguments") or []
    return {a["name"]: a for a in args if isinstance(a, dict) and isinstance(a.get("name"), str)}


def compare_prompt(before: dict[str, Any], after: dict[str, Any]) -> Iterator[dict[str, Any]]:
    name = after.get("name", before.get("name", "?"))
    yield from check_text("prompts", name, before, after)
    args_a, args_b = _arguments(before), _arguments(after)
    for arg in sorted(set(args_b) - set(args_a)):
        rule = PROMPT_REQUIRED_ARGUMENT_ADDED if args_b[arg].get("required") else PROMPT_OPTIONAL_ARGUMENT_ADDED
        yield make_change(rule, "prompts", name, f"arguments.{segment(arg)}", None, args_b[arg])
    for arg in sorted(set(args_a) - set(args_b)):
        yield make_change(PROMPT_ARGUMENT_REMOVED, "prompts", name, f"arguments.{segment(arg)}", args_a[arg], None)
    for arg in sorted(set(args_a) & set(args_b)):
        a, b = args_a[arg], args_b[arg]
        path = f"arguments.{segment(arg)}"
        if bool(a.get("required")) != bool(b.get("required")):
            rule = PROMPT_ARGUMENT_BECAME_REQUIRED if b.get("required") else PROMPT_ARGUMENT_BECAME_OPTIONAL
            yield make_change(rule, "prompts", name, f"{path}.required", a.get("required"), b.get("required"))
        yield from check_text("prompts", name, a, b, prefix=path)
        for key in sorted((set(a) | set(b)) - {"name", "required", "title", "description"}):
            if not json_equal(a.get(key), b.get(key)):
                yield make_change(FIELD_CHANGED, "prompts", name, f"{path}.{key}", a.get(key), b.get(key))
    yield from check_other_fields("prompts", name, before, after, ("name", "title", "description", "arguments"))
