"""What a session comes to: a complete era, or a recorded status ("unsupported: …" for a refusal,
"error: …" for a failure), and the wording of those statuses.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

import mcp_types as types
from mcp.shared.exceptions import MCPError


class ListChanged(Exception):
    """The list changed while it was being paged through; start again from the first page."""


class EraFailure(Exception):
    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


@dataclass
class EraResult:
    era: str
    status: str
    lists: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    server: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, dict[str, int]] = field(default_factory=dict)


_TRANSPORT_FAILURES = frozenset({types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT})


def rejection(step: str, exc: MCPError) -> str:
    # The SDK reports a dropped connection as -32000 "Connection closed"; a server may send -32000 itself
    # (TypeScript 1.x servers do, for a sessionless modern request), which is a refusal, not a failure.
    transport = exc.code in _TRANSPORT_FAILURES and (
        exc.code != types.CONNECTION_CLOSED or "connection closed" in (exc.message or "").lower()
    )
    prefix = "error" if transport else "unsupported"
    supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
    extra = f" (supported: {', '.join(map(str, supported))})" if isinstance(supported, list) else ""
    return f"{prefix}: {step} failed with {exc.code} {exc.message}{extra}"


def jsonrpc_error(exc: MCPError) -> dict[str, Any]:
    record: dict[str, Any] = {"mode": "jsonrpc_error", "code": exc.code, "message": first_line(exc.message)}
    if isinstance(exc.data, dict) and isinstance(exc.data.get("supported"), list):
        record["supported"] = sorted(exc.data["supported"])
    return record


def first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:limit]


def leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaves(inner)
    else:
        yield exc


def describe(exc: BaseException) -> str:
    parts = []
    for leaf in leaves(exc):
        text = f"{type(leaf).__name__}: {leaf}".strip()
        if text not in parts:
            parts.append(text)
    return "; ".join(parts)[:500]


def with_stderr(status: str, errlog: TextIO, lines: int = 5) -> str:
    """Append the last lines the server printed on stderr: the evidence when a server will not start."""
    if status.startswith("unsupported"):
        return status
    with contextlib.suppress(OSError, ValueError):
        errlog.flush()
        errlog.seek(0)
        tail = [line.rstrip() for line in errlog.read().splitlines() if line.strip()][-lines:]
        if tail:
            return f"{status} | server stderr: " + " / ".join(tail)
    return status
