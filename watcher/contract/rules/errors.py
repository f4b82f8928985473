"""Family `errors`: error semantics, probed at snapshot time — unknown tool, unknown resource, a call
missing a required argument, an unsupported protocol version. Each probe answers with a JSON-RPC
error (mode `jsonrpc_error`, with its code) or a tool result with isError: true (mode `tool_error`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules.base import Rule, make_change

F = "errors"
ERROR_CODE_CHANGED = Rule(
    "error_code_changed",
    F,
    "A failure answers with another JSON-RPC error code (e.g. resource not found "
    "-32002 → -32602): clients matching on the code misread it.",
    True,
    False,
)
ERROR_MODE_CHANGED = Rule(
    "error_mode_changed",
    F,
    "A failure moved between a JSON-RPC error and a tool result with isError: true "
    "(or stopped failing): clients handle it on the wrong path.",
    True,
    False,
)

RULES = (ERROR_CODE_CHANGED, ERROR_MODE_CHANGED)

LIST = "errors"
COMPARABLE_MODES = frozenset({"jsonrpc_error", "tool_error", "success"})
ERA_BOUND_PROBES = frozenset({"unsupported_protocol_version"})


def compare_errors(before: dict[str, Any], after: dict[str, Any], era_bound: bool = True) -> Iterator[dict[str, Any]]:
    """Probes that were skipped on either side (e.g. no tool has a required argument) are not compared."""
    for probe in sorted(set(before) & set(after)):
        if probe in ERA_BOUND_PROBES and not era_bound:
            continue
        a, b = before[probe] or {}, after[probe] or {}
        mode_a, mode_b = a.get("mode"), b.get("mode")
        if mode_a not in COMPARABLE_MODES or mode_b not in COMPARABLE_MODES:
            continue
        if mode_a != mode_b:
            yield make_change(ERROR_MODE_CHANGED, LIST, probe, f"{probe}.mode", _describe(a), _describe(b))
        elif mode_a == "jsonrpc_error" and a.get("code") != b.get("code"):
            yield make_change(ERROR_CODE_CHANGED, LIST, probe, f"{probe}.code", a.get("code"), b.get("code"))


def _describe(probe: dict[str, Any]) -> str:
    if probe.get("mode") == "jsonrpc_error":
        return f"jsonrpc_error {probe.get('code')}"
    return str(probe.get("mode"))
