"""The error probes: how the server answers an unknown tool, a missing argument, an unknown resource
and (modern era) an unsupported protocol version.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from watcher.contract.snapshot.lists import send_raw
from watcher.contract.snapshot.outcome import first_line, jsonrpc_error

PROBE_TOOL = "mcp-watcher-probe-unknown-tool"
PROBE_RESOURCE = "mcp-watcher-probe:///unknown-resource"
PROBE_PROTOCOL_VERSION = "1900-01-01"


async def probe_errors(
    session: ClientSession, era: str, capabilities: dict[str, Any], tools: list[dict[str, Any]]
) -> dict[str, Any]:
    probes: dict[str, Any] = {}
    if "tools" in capabilities:
        probes["unknown_tool"] = await _probe(
            session, types.CallToolRequest(params=types.CallToolRequestParams(name=PROBE_TOOL, arguments={}))
        )
        victim = _tool_for_missing_argument(tools)
        if victim is None:
            probes["missing_required_argument"] = {
                "mode": "skipped",
                "reason": "no read-only or non-destructive tool has a required argument",
            }
        else:
            result = await _probe(
                session, types.CallToolRequest(params=types.CallToolRequestParams(name=victim, arguments={}))
            )
            probes["missing_required_argument"] = {**result, "tool": victim}
    else:
        probes["unknown_tool"] = probes["missing_required_argument"] = {"mode": "skipped", "reason": "no tools"}
    if "resources" in capabilities:
        probes["unknown_resource"] = await _probe(
            session, types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=PROBE_RESOURCE))
        )
    else:
        probes["unknown_resource"] = {"mode": "skipped", "reason": "no resources"}
    if era == "modern":
        try:
            await session.send_discover(PROBE_PROTOCOL_VERSION)
            probes["unsupported_protocol_version"] = {"mode": "success"}
        except MCPError as exc:
            probes["unsupported_protocol_version"] = jsonrpc_error(exc)
    return probes


def _tool_for_missing_argument(tools: list[dict[str, Any]]) -> str | None:
    """A tool with required arguments, called with none: prefer read-only ones, never a destructive one."""
    candidates = []
    for tool in tools:
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict) or not schema.get("required"):
            continue
        hints = tool.get("annotations") or {}
        if hints.get("destructiveHint") is True:
            continue
        candidates.append((0 if hints.get("readOnlyHint") is True else 1, tool.get("name", "")))
    return min(candidates)[1] if candidates else None


async def _probe(session: ClientSession, request: types.Request[Any, Any]) -> dict[str, Any]:
    try:
        raw = await send_raw(session, request)
    except MCPError as exc:
        return jsonrpc_error(exc)
    except ValidationError as exc:
        return {"mode": "failed", "message": first_line(str(exc))}
    if raw.get("isError") is True:
        texts = [c.get("text", "") for c in raw.get("content") or [] if isinstance(c, dict)]
        return {"mode": "tool_error", "message": first_line(texts[0] if texts else "")}
    return {"mode": "success"}
