"""One era under one client profile: connect (or borrow a shared connection), handshake or discover,
read the server record, the lists and the error probes; legacy: the raw capabilities and the version probes.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from contextlib import AsyncExitStack
from typing import Any, TextIO

import anyio
import mcp_types as types
from mcp import Client
from mcp.client import session as mcp_client_session
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT
from mcp_types.version import LATEST_MODERN_VERSION
from pydantic import ValidationError

from watcher.contract.handshake import ClientProfile, accepted_versions, reinitialize
from watcher.contract.normalize import LISTS, split_capabilities
from watcher.contract.snapshot.connection import Connection, borrowed
from watcher.contract.snapshot.lists import fetch_list
from watcher.contract.snapshot.outcome import EraFailure, EraResult, describe, leaves, rejection, with_stderr
from watcher.contract.snapshot.probes import probe_errors
from watcher.contract.snapshot.target import SnapshotTarget, open_transport
from watcher.contract.stdout_noise import StdoutNoise

_CHANGE_NOTIFICATIONS = {
    "notifications/tools/list_changed": ("tools",),
    "notifications/resources/list_changed": ("resources", "resource-templates"),
    "notifications/prompts/list_changed": ("prompts",),
}


async def snapshot_era(
    target: SnapshotTarget,
    era: str,
    timeout: float,
    profile: ClientProfile,
    probe: bool,
    connection: Connection | None = None,
) -> EraResult:
    """One era under one profile, on a new connection or on `connection`."""
    noise = StdoutNoise()
    with contextlib.ExitStack() as files:
        errlog = (
            connection.errlog
            if connection
            else files.enter_context(tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace"))
        )
        try:
            with anyio.fail_after(timeout):
                return await _connect_and_read(target, era, timeout, errlog, profile, probe, noise, connection)
        except Exception as exc:  # boundary: any failure of a foreign server is a recorded result
            causes = list(leaves(exc))
            failure = next((leaf for leaf in causes if isinstance(leaf, EraFailure)), None)
            timed_out = failure is None and any(isinstance(leaf, TimeoutError) for leaf in causes)
            if failure is not None:
                status = failure.status
            elif timed_out:
                status = f"error: timed out after {timeout:g} s"
            else:
                status = f"error: {describe(exc)}"
            return EraResult(era, with_stderr(noise.status(status, timed_out, timeout), errlog))


async def _connect_and_read(
    target: SnapshotTarget,
    era: str,
    timeout: float,
    errlog: TextIO,
    profile: ClientProfile,
    probe: bool,
    noise: StdoutNoise,
    connection: Connection | None = None,
) -> EraResult:
    changed: set[str] = set()

    async def on_message(message: Any) -> None:
        noise.add(message)
        for list_name in _CHANGE_NOTIFICATIONS.get(getattr(message, "method", ""), ()):
            changed.add(list_name)

    async with AsyncExitStack() as stack:
        transport = borrowed(connection) if connection else await open_transport(target, stack, timeout, errlog)
        mode = "legacy" if era == "legacy" else LATEST_MODERN_VERSION
        client = Client(
            transport,
            mode=mode,
            cache=None,
            read_timeout_seconds=timeout,
            message_handler=on_message,
            **profile.client_kwargs(),
        )
        try:
            await stack.enter_async_context(client)
        except Exception as exc:
            # The client's task groups may wrap the server's refusal in an exception group.
            refusal = next((leaf for leaf in leaves(exc) if isinstance(leaf, MCPError)), None)
            if refusal is None:
                raise
            step = "initialize" if era == "legacy" else "connect"
            raise EraFailure(rejection(step, refusal)) from exc
        session = client.session
        if era == "modern":
            discover = await _discover(session)
            server = _modern_server(client, discover)
        else:
            server = _legacy_server(client)
        server["clientProfile"] = profile.record()
        capabilities = server.get("capabilities") or {}
        lists: dict[str, list[dict[str, Any]]] = {}
        stats: dict[str, dict[str, int]] = {}
        ttl: dict[str, int] = {}
        for spec in LISTS:
            lists[spec.name], stats[spec.name] = await fetch_list(session, spec, capabilities, changed, ttl)
        # Not part of the contract, but a long cache lifetime without listChanged is worth a lint.
        server["listTtlMs"] = ttl
        errors = await probe_errors(session, era, capabilities, lists["tools"])
        if era == "legacy":
            server.update(await _whole_capabilities(target, session, server, timeout, profile))
        if era == "legacy" and probe:
            server.update(await _probe_legacy_versions(target, session, server["protocolVersion"], timeout, profile))
        return EraResult(era, "ok", lists, server, errors, stats)


async def fresh_initialize(
    target: SnapshotTarget, version: str, timeout: float, profile: ClientProfile
) -> dict[str, Any]:
    """One `initialize` on a new session (a new process on stdio), its raw result."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
        async with AsyncExitStack() as stack:
            transport = await open_transport(target, stack, timeout, errlog)
            client = Client(transport, mode="legacy", cache=None, read_timeout_seconds=timeout)
            # The SDK's handshake always offers its latest revision; a probe offers one of its choosing,
            # so it drives an un-initialized session itself.
            bare = await stack.enter_async_context(await client._build_session(stack))
            return await reinitialize(bare, version, profile)


async def _whole_capabilities(
    target: SnapshotTarget, session: ClientSession, server: dict[str, Any], timeout: float, profile: ClientProfile
) -> dict[str, Any]:
    """server.json's capabilities as the server sent them, every nested key: the SDK's typed initialize
    result keeps only the keys it models (it drops e.g. `tasks.requests.sampling`), so the same
    `initialize` is sent once more and its raw answer read (on stdio, on the open session). Where that
    is refused, the typed result stays, and server.json says so."""
    version = str(server.get("protocolVersion"))
    raw: dict[str, Any] | None = None
    with contextlib.suppress(MCPError):
        if not target.url:
            raw = await reinitialize(session, version, profile)
        else:
            raw = await fresh_initialize(target, version, timeout, profile)
    if not raw or raw.get("protocolVersion") != version or not isinstance(raw.get("capabilities"), dict):
        return {"capabilitiesSource": "sdk-model"}
    capabilities, extensions = split_capabilities(raw["capabilities"])
    return {"capabilities": capabilities, "extensions": extensions, "capabilitiesSource": "raw-initialize"}


async def _probe_legacy_versions(
    target: SnapshotTarget, session: ClientSession, preferred: str, timeout: float, profile: ClientProfile
) -> dict[str, Any]:
    """server.json's version fields from one initialize per known legacy revision: on stdio, on the open
    session (a new process only when the server refuses to re-initialize); on HTTP, a new session each,
    over the same HTTP client (and so the same connection)."""

    async def fresh_session(version: str) -> dict[str, Any]:
        return await fresh_initialize(target, version, timeout, profile)

    async def same_session(version: str) -> dict[str, Any]:
        return await reinitialize(session, version, profile)

    accepted, answers = await accepted_versions(preferred, None if target.url else same_session, fresh_session)
    return {
        "protocolVersion": preferred,
        "supportedVersions": accepted,
        "supportedVersionsSource": "initialize-probes",
        "versionProbes": answers,
    }


async def _discover(session: ClientSession) -> dict[str, Any]:
    """The server's discover result. Asked again when the SDK's own wait for it (a fixed 10 s) ran out: on a
    stdio server this is the first request, which a server still starting on a loaded machine answers late.
    A -32001 the server itself sends back sooner is its answer (a rejection), not a wait to repeat. The era's
    time-out (`timeouts.snapshot`, around the whole era) is what ends a server that never answers."""
    while True:
        asked = time.monotonic()
        try:
            raw: dict[str, Any] = await session.send_discover(LATEST_MODERN_VERSION)
            break
        except MCPError as exc:
            waited_out = time.monotonic() - asked >= mcp_client_session.DISCOVER_TIMEOUT_SECONDS
            if exc.code == REQUEST_TIMEOUT and waited_out:
                continue
            raise EraFailure(rejection("server/discover", exc)) from exc
    try:
        result = types.DiscoverResult.model_validate(raw)
        session.adopt(result)
    except (ValidationError, RuntimeError) as exc:
        raise EraFailure(f"unsupported: server/discover answered with an unusable result: {exc}") from exc
    return raw


def _legacy_server(client: Client) -> dict[str, Any]:
    init = client.session.initialize_result
    assert init is not None
    dumped = init.model_dump(by_alias=True, mode="json", exclude_none=True)
    capabilities, extensions = split_capabilities(dumped.get("capabilities"))
    return {
        "protocolVersion": client.protocol_version,
        "supportedVersions": [client.protocol_version],
        "supportedVersionsSource": "initialize",
        "capabilities": capabilities,
        "extensions": extensions,
        "instructions": dumped.get("instructions"),
        "serverInfo": dumped.get("serverInfo"),
    }


def _modern_server(client: Client, discover: dict[str, Any]) -> dict[str, Any]:
    capabilities, extensions = split_capabilities(discover.get("capabilities"))
    info = client.server_info
    return {
        "protocolVersion": client.protocol_version,
        "supportedVersions": sorted(discover.get("supportedVersions") or []),
        "supportedVersionsSource": "server/discover",
        "capabilities": capabilities,
        "extensions": extensions,
        "instructions": discover.get("instructions"),
        "serverInfo": info.model_dump(by_alias=True, mode="json", exclude_none=True) if info else None,
    }
