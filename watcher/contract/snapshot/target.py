"""Where a snapshot connects: a stdio command or a streamable HTTP endpoint, and the credentials it
carries (recorded by name, their values masked in everything written).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx2
from mcp.client.streamable_http import streamable_http_client

from watcher.boundary.stdio import stdio_transport


@dataclass
class SnapshotTarget:
    url: str | None = None
    """Streamable HTTP endpoint."""
    command: list[str] | None = None
    """Stdio server command, started by `watcher.boundary.stdio` (a team's server comes wrapped in its
    room by `Sandbox.wrap`)."""
    env: dict[str, str] | None = field(default=None, repr=False)
    """Environment for the stdio child, merged over the client's small safe set (`boundary.stdio.CLIENT_ENV`);
    the only way a value reaches the server: never its command line. A caller that inherits more
    scrubs it first (the suite runner does)."""
    cwd: str | None = None
    headers: dict[str, str] | None = field(default=None, repr=False)
    """HTTP headers, e.g. an auth profile's Authorization. Never written to the snapshot."""
    private_env: frozenset[str] = frozenset()
    """Names in `env` that hold credentials: recorded by name in snapshot.json, their values masked in
    everything the snapshot writes or returns (a server may echo its token in an error)."""

    def validate(self) -> None:
        if bool(self.url) == bool(self.command):
            raise ValueError("a snapshot target needs exactly one of url (streamable HTTP) or command (stdio)")
        if self.private_env and not self.command:
            raise ValueError("environment variables apply to stdio servers (command) only")
        missing = sorted(self.private_env - set(self.env or {}))
        if missing:
            raise ValueError(f"private_env names variables not in env: {', '.join(missing)}")

    def private_values(self) -> tuple[str, ...]:
        """The values to mask, longest first (so that a value containing another is masked whole)."""
        env = self.env or {}
        values = {env[name] for name in self.private_env if len(env[name]) >= MIN_MASKED_LENGTH}
        values |= {value for value in (self.headers or {}).values() if len(value) >= MIN_MASKED_LENGTH}
        return tuple(sorted(values, key=len, reverse=True))


MIN_MASKED_LENGTH = 6
"""Shorter values are not masked: they match ordinary words of the contract ("read", "admin")."""


async def open_transport(target: SnapshotTarget, stack: AsyncExitStack, timeout: float, errlog: TextIO) -> Any:
    if target.url:
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=target.headers or {}, timeout=httpx2.Timeout(timeout))
        )
        return streamable_http_client(target.url, http_client=http)
    assert target.command
    return stdio_transport(target.command, env=target.env, cwd=target.cwd, errlog=errlog)
