"""Family `errors`: how the server answers four deliberate mistakes, recorded at snapshot time — a call
to an unknown tool, a read of an unknown resource, a call missing a required argument and a request in
an unsupported protocol version. Each answer is either a JSON-RPC error (mode `jsonrpc_error`, with its
code) or a tool result with isError: true (mode `tool_error`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules.base import Change, Compared, Rule, make_change

FAMILY = "errors"
ERROR_CODE_CHANGED = Rule(
    id="error_code_changed",
    family=FAMILY,
    doc="A failure answers with another JSON-RPC error code (e.g. resource not found "
    "-32002 → -32602): clients matching on the code misread it.",
    breaks_clients=True,
    affects_models=False,
)
ERROR_MODE_CHANGED = Rule(
    id="error_mode_changed",
    family=FAMILY,
    doc="A failure moved between a JSON-RPC error and a tool result with isError: true "
    "(or stopped failing): clients handle it on the wrong path.",
    breaks_clients=True,
    affects_models=False,
)

RULES = (ERROR_CODE_CHANGED, ERROR_MODE_CHANGED)

_COMPARABLE_MODES = frozenset({"jsonrpc_error", "tool_error", "success"})
_PER_ERA_PROBES = frozenset({"unsupported_protocol_version"})


def check(compared: Compared) -> Iterator[Change]:
    """Compare the errors.json records. A probe skipped on either side (e.g. no tool has a required
    argument) is not compared, nor is the protocol-version probe across eras."""
    before: dict[str, Any] = compared.before or {}
    after: dict[str, Any] = compared.after or {}
    for probe in sorted(set(before) & set(after)):
        if probe in _PER_ERA_PROBES and not compared.era_bound:
            continue
        a, b = before[probe] or {}, after[probe] or {}
        mode_a, mode_b = a.get("mode"), b.get("mode")
        if mode_a not in _COMPARABLE_MODES or mode_b not in _COMPARABLE_MODES:
            continue
        if mode_a != mode_b:
            yield make_change(
                ERROR_MODE_CHANGED, compared.list_name, probe, f"{probe}.mode", _describe(a), _describe(b)
            )
        elif mode_a == "jsonrpc_error" and a.get("code") != b.get("code"):
            yield make_change(
                ERROR_CODE_CHANGED, compared.list_name, probe, f"{probe}.code", a.get("code"), b.get("code")
            )


def _describe(probe: dict[str, Any]) -> str:
    if probe.get("mode") == "jsonrpc_error":
        return f"jsonrpc_error {probe.get('code')}"
    return str(probe.get("mode"))
