"""Paging through a list: every page, raw, and walked again when it changes on the way."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from watcher.contract.normalize import ListSpec, entry_key, normalize_entries
from watcher.contract.snapshot.outcome import EraFailure, ListChanged

MAX_PAGES = 1000
MAX_WALKS = 6
_RAW = TypeAdapter(dict[str, Any])
"""Lists and probes are read as raw JSON, so that nothing the SDK models drops is lost (see `send_raw`)."""


_LIST_REQUESTS: dict[str, type[Any]] = {
    "tools": types.ListToolsRequest,
    "resources": types.ListResourcesRequest,
    "resource-templates": types.ListResourceTemplatesRequest,
    "prompts": types.ListPromptsRequest,
}


async def fetch_list(
    session: ClientSession, spec: ListSpec, capabilities: dict[str, Any], changed: set[str], ttl: dict[str, int]
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The full list. A multi-page list counts only when two whole walks in a row agree (the spec gives
    no consistency across pages); a walk is abandoned early on an expired cursor, a duplicate entry
    or a list_changed notification."""
    if spec.capability not in capabilities:
        return [], {"pages": 0, "walks": 0}
    previous: list[dict[str, Any]] | None = None
    for walk in range(1, MAX_WALKS + 1):
        try:
            entries, pages = await _walk(session, spec, changed, ttl)
        except ListChanged:
            previous = None
            continue
        if pages <= 1 or (previous is not None and entries == previous):
            return normalize_entries(spec, entries), {"pages": pages, "walks": walk}
        previous = entries
    raise EraFailure(f"error: {spec.name} list kept changing across {MAX_WALKS} walks")


async def _walk(
    session: ClientSession, spec: ListSpec, changed: set[str], ttl: dict[str, int]
) -> tuple[list[dict[str, Any]], int]:
    changed.discard(spec.name)
    request_type = _LIST_REQUESTS[spec.name]
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    cursors: set[str] = set()
    cursor: str | None = None
    for page in range(1, MAX_PAGES + 1):
        try:
            raw = await send_raw(session, request_type(params=types.PaginatedRequestParams(cursor=cursor)))
        except MCPError as exc:
            if cursor is not None and exc.code == types.INVALID_PARAMS:
                raise ListChanged from exc  # the cursor expired: the list changed under us
            if cursor is None and exc.code == types.METHOD_NOT_FOUND:
                return [], 0
            raise EraFailure(f"error: {spec.name} list failed with {exc.code} {exc.message}") from exc
        if cursor is None and isinstance(raw.get("ttlMs"), int) and not isinstance(raw.get("ttlMs"), bool):
            ttl[spec.name] = raw["ttlMs"]
        for entry in raw.get(spec.result_field) or []:
            if not isinstance(entry, dict):
                continue
            key = entry_key(spec, entry)
            if key in seen:
                raise ListChanged
            seen.add(key)
            entries.append(entry)
        if spec.name in changed:
            raise ListChanged
        cursor = raw.get("nextCursor")
        if not cursor:
            return entries, page
        if cursor in cursors:
            raise EraFailure(f"error: {spec.name} list repeats cursor {cursor!r}")
        cursors.add(cursor)
    raise EraFailure(f"error: {spec.name} list has more than {MAX_PAGES} pages")


async def send_raw(session: ClientSession, request: types.Request[Any, Any]) -> dict[str, Any]:
    """The request's result as the server's raw JSON object. The SDK types `send_request`'s result type as a
    pydantic model; a TypeAdapter of a plain dict validates and returns the same way at run time."""
    raw: dict[str, Any] = await session.send_request(request, _RAW)  # type: ignore[type-var]
    return raw
