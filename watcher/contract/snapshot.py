"""Take a contract snapshot of a running MCP server with the `mcp` client (stdio or streamable HTTP).

Over 350 lines: connecting, paging through lists and probing errors share one session and its failure handling.

One era per connection: `legacy` does the initialize handshake, `modern` calls server/discover
and speaks 2026-07-28 per request (so the modern sessions of several client profiles share one). A
server that refuses an era gets a recorded "unsupported: <reason>" for it; a server that cannot be
reached or hangs gets "error: <reason>". Neither raises. Lists are fetched raw (the client's
x-mcp-header filter must not hide a tool from the snapshot), every page, and re-fetched from the
start when they change mid-way.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.version import LATEST_MODERN_VERSION
from pydantic import TypeAdapter, ValidationError

from watcher.contract.handshake import (
    DEFAULT_CLIENT_PROFILES,
    ClientProfile,
    accepted_versions,
    client_profile,
    reinitialize,
)
from watcher.contract.normalize import (
    ERA_CHOICES,
    ERAS,
    ERRORS_FILE,
    LISTS,
    MANIFEST_FILE,
    PROFILES_DIR,
    SERVER_FILE,
    SNAPSHOT_FILES,
    ListSpec,
    entry_key,
    normalize_entries,
    split_capabilities,
    write_json,
)
from watcher.contract.stdout_noise import StdoutNoise, quiet_client_log

FORMAT_VERSION = 1
PROBE_TOOL = "mcp-watcher-probe-unknown-tool"
PROBE_RESOURCE = "mcp-watcher-probe:///unknown-resource"
PROBE_PROTOCOL_VERSION = "1900-01-01"
"""Where the snapshots under the second and later client profiles go: `profiles/<name>/`."""
_SHARED_VERSION_FIELDS = ("supportedVersions", "supportedVersionsSource", "versionProbes")
MAX_PAGES = 1000
MAX_WALKS = 6
MIN_MASKED_LENGTH = 6
"""Shorter values are not masked: they match ordinary words of the contract ("read", "admin")."""
MASK = "[secret]"
_RAW = TypeAdapter(dict[str, Any])
"""Lists and probes are read as raw JSON, so that nothing the SDK models drops is lost (see `_send_raw`)."""
_TRANSPORT_FAILURES = frozenset({types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT})
_LIST_REQUESTS: dict[str, type[Any]] = {
    "tools": types.ListToolsRequest,
    "resources": types.ListResourcesRequest,
    "resource-templates": types.ListResourceTemplatesRequest,
    "prompts": types.ListPromptsRequest,
}
_CHANGE_NOTIFICATIONS = {
    "notifications/tools/list_changed": ("tools",),
    "notifications/resources/list_changed": ("resources", "resource-templates"),
    "notifications/prompts/list_changed": ("prompts",),
}


@dataclass
class SnapshotTarget:
    url: str | None = None
    """Streamable HTTP endpoint."""
    command: list[str] | None = None
    """Stdio server command."""
    env: dict[str, str] | None = field(default=None, repr=False)
    """Environment for the stdio child, merged over the SDK's small safe default set (PATH, HOME, …);
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


class _ListChanged(Exception):
    """The list changed while it was being paged through; start again from the first page."""


class _EraFailure(Exception):
    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


@dataclass
class _EraResult:
    era: str
    status: str
    lists: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    server: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, dict[str, int]] = field(default_factory=dict)


async def take_snapshot(
    target: SnapshotTarget,
    out_dir: Path,
    era: str = "both",
    timeout: float = 60.0,
    profile: str | None = None,
    client_profile_name: str | Sequence[str] = DEFAULT_CLIENT_PROFILES,
    probe_versions: bool = True,
) -> dict[str, Any]:
    """Write the snapshot of `target` to `out_dir` (`out_dir/legacy` and `out_dir/modern` for "both").

    Returns a summary: {"outDir", "layout", "eras": {era: {"status", "counts", "protocolVersion"}},
    "profiles": {profile: {era: …}}} ("eras" is the first profile's).
    `profile` only names the credentials profile in snapshot.json; its headers and variables come in
    `target.headers` and `target.env` and are recorded by name only. `client_profile_name` names the
    client-capability profiles to take the contract under (`watcher.contract.handshake.CLIENT_PROFILES`,
    or comma lists of capabilities), one name or several: the first is written where a one-profile
    snapshot goes, each other one under `out_dir/profiles/<name>/` in the same layout. Every era under
    every profile is read at the same time: each legacy session on its own connection, the modern era's
    sessions of a stdio server on one process (`_take_sessions`); the legacy version probes, which do
    not depend on the client's capabilities, are made once, by the first profile, and shared.
    `probe_versions` False skips the legacy version probes (server.json then records one handshake).
    """
    target.validate()
    names = [client_profile_name] if isinstance(client_profile_name, str) else list(client_profile_name)
    clients = distinct_profiles(names)
    if era not in ERA_CHOICES:
        raise ValueError(f"era must be one of {', '.join(ERA_CHOICES)}, not {era!r}")
    out_dir = Path(out_dir)
    eras = ERAS if era == "both" else (era,)
    summary: dict[str, Any] = {"outDir": str(out_dir), "layout": era, "eras": {}, "profiles": {}}
    manifest: dict[str, Any] = {
        "formatVersion": FORMAT_VERSION,
        "layout": era,
        "eras": {},
        "lists": {},
        "headerNames": sorted(target.headers or {}),
        "envNames": sorted(target.private_env),
        "profile": profile,
        "clientProfile": clients[0].record(),
        "clientProfiles": [client.record() for client in clients],
    }
    secrets = target.private_values()
    taken = await _take_sessions(target, eras, timeout, clients, probe_versions)
    per_era = [
        _share_version_probes([taken[name, i] for i in range(len(clients))], clients, probe_versions) for name in eras
    ]
    for name, results in zip(eras, per_era, strict=True):
        for index, (client, raw) in enumerate(zip(clients, results, strict=True)):
            result = _masked(raw, secrets)
            root = out_dir if index == 0 else out_dir / PROFILES_DIR / client.name
            era_dir = root / name if era == "both" else root
            _write_era(era_dir, result)
            counts = {spec.name: len(result.lists.get(spec.name, [])) for spec in LISTS} if result.lists else {}
            version = result.server.get("protocolVersion")
            record = {"status": result.status, "counts": counts, "protocolVersion": version}
            summary["profiles"].setdefault(client.name, {})[name] = record
            if index == 0:
                summary["eras"][name] = record
                manifest["eras"][name] = result.status
                manifest["lists"][name] = result.stats
    _remove_stale_layout(out_dir, era)
    for index, client in enumerate(clients):
        if index:
            _remove_stale_layout(out_dir / PROFILES_DIR / client.name, era)
    _remove_stale_profiles(out_dir, {client.name for client in clients[1:]})
    write_json(out_dir / MANIFEST_FILE, manifest)
    return summary


def distinct_profiles(names: Sequence[str]) -> list[ClientProfile]:
    if not names:
        raise ValueError("at least one client profile is needed")
    clients: list[ClientProfile] = []
    for name in names:
        client = client_profile(name)
        if any(c.name == client.name for c in clients):
            raise ValueError(f"client profile {client.name!r} is given twice")
        clients.append(client)
    return clients


def _share_version_probes(results: list[_EraResult], clients: list[ClientProfile], probe: bool) -> list[_EraResult]:
    """One era's results, every profile's; the first profile's legacy version probes are shared."""
    first = results[0]
    if first.era == "legacy" and probe and first.status == "ok":
        shared = {k: first.server[k] for k in _SHARED_VERSION_FIELDS if k in first.server}
        for result in results[1:]:
            if result.status == "ok" and result.server.get("protocolVersion") == first.server.get("protocolVersion"):
                result.server.update(shared, versionProbesFrom=clients[0].name)
    return results


def _remove_stale_profiles(out_dir: Path, keep: set[str]) -> None:
    """Profile folders of an earlier snapshot that this one did not take: diff would read them as current."""
    folder = out_dir / PROFILES_DIR
    if not folder.is_dir():
        return
    for child in folder.iterdir():
        if child.is_dir() and child.name not in keep:
            for era_name in ERAS:
                _remove_stale_layout(child, era_name)
            for stale in SNAPSHOT_FILES:
                (child / stale).unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                child.rmdir()
    with contextlib.suppress(OSError):
        folder.rmdir()


def _masked(result: _EraResult, secrets: tuple[str, ...]) -> _EraResult:
    if not secrets:
        return result
    return _EraResult(
        result.era,
        _mask(result.status, secrets),
        _mask(result.lists, secrets),
        _mask(result.server, secrets),
        _mask(result.errors, secrets),
        result.stats,
    )


def _mask(value: Any, secrets: tuple[str, ...]) -> Any:
    """`value` with every secret replaced by MASK, in every string of a JSON-like structure (keys too)."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, MASK)
        return value
    if isinstance(value, dict):
        return {_mask(key, secrets): _mask(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask(item, secrets) for item in value]
    return value


def take_snapshot_sync(
    target: SnapshotTarget,
    out_dir: Path,
    era: str = "both",
    timeout: float = 60.0,
    profile: str | None = None,
    client_profile_name: str | Sequence[str] = DEFAULT_CLIENT_PROFILES,
    probe_versions: bool = True,
) -> dict[str, Any]:
    return asyncio.run(take_snapshot(target, out_dir, era, timeout, profile, client_profile_name, probe_versions))


def _remove_stale_layout(out_dir: Path, era: str) -> None:
    """Files of an earlier snapshot in the other layout would make the folder ambiguous to `diff`."""
    if era == "both":
        for stale in SNAPSHOT_FILES:
            (out_dir / stale).unlink(missing_ok=True)
        return
    for name in ERAS:
        era_dir = out_dir / name
        if era_dir.is_dir():
            for stale in SNAPSHOT_FILES:
                (era_dir / stale).unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                era_dir.rmdir()


def _write_era(era_dir: Path, result: _EraResult) -> None:
    era_dir.mkdir(parents=True, exist_ok=True)
    for stale in SNAPSHOT_FILES:
        (era_dir / stale).unlink(missing_ok=True)
    server = {"era": result.era, "status": result.status, **result.server}
    write_json(era_dir / SERVER_FILE, server)
    if result.status != "ok":
        return
    for spec in LISTS:
        write_json(era_dir / spec.file, result.lists[spec.name])
    write_json(era_dir / ERRORS_FILE, result.errors)


# -- one era ---------------------------------------------------------------------------------------


_Job = tuple[str, int]
"""(era, index of the client profile): one session of a snapshot."""


async def _take_sessions(
    target: SnapshotTarget, eras: Sequence[str], timeout: float, clients: list[ClientProfile], probe: bool
) -> dict[_Job, _EraResult]:
    """Every era under every profile, at once. A stdio server's start-up is most of a session's time,
    and mostly CPU, so a process per session adds up even when they run at the same time: the modern
    era's sessions, stateless requests that each carry the profile's client capabilities, share one
    process. Each legacy session has a process of its own: its server keeps the client's capabilities
    from the `initialize` (a server may register tools then, and never drop them), and a connection
    serves one era (the SDK's servers refuse an `initialize` after modern requests). HTTP sessions cost
    no process: each runs on its own connection."""
    jobs = [(era, index) for era in eras for index in range(len(clients))]
    lanes: list[list[_Job]] = [[job] for job in jobs]
    if target.command and len(clients) > 1 and "modern" in eras:
        shared = [job for job in jobs if job[0] == "modern"]
        lanes = [shared] + [[job] for job in jobs if job not in shared]
    taken = await asyncio.gather(*(_run_lane(target, lane, timeout, clients, probe) for lane in lanes))
    return {job: result for lane in taken for job, result in lane.items()}


async def _run_lane(
    target: SnapshotTarget, jobs: list[_Job], timeout: float, clients: list[ClientProfile], probe: bool
) -> dict[_Job, _EraResult]:
    """`jobs` in turn on one server process; a session that the earlier ones may have spoiled is taken
    again on a process of its own, so that every result is what a new process would have given."""

    async def fresh(job: _Job, connection: _Connection | None = None) -> _EraResult:
        era, index = job
        return await _snapshot_era(target, era, timeout, clients[index], probe and index == 0, connection)

    if len(jobs) == 1:
        return {jobs[0]: await fresh(jobs[0])}
    results: dict[_Job, _EraResult] = {}
    with (
        tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog,
        contextlib.suppress(Exception),  # boundary: where the process will not start, each job fails on its own
    ):
        async with AsyncExitStack() as stack:
            streams = await stack.enter_async_context(await _open_transport(target, stack, timeout, errlog))
            for turn, job in enumerate(jobs):
                result = await fresh(job, _Connection(streams, errlog, turn))
                if turn and not _as_if_alone(
                    result, next((r for (era, _), r in results.items() if era == job[0]), None)
                ):
                    break
                results[job] = result
                if result.status.startswith("error"):
                    break  # the process may be gone or wedged
    rest = [job for job in jobs if job not in results]
    results.update(zip(rest, await asyncio.gather(*(fresh(job) for job in rest)), strict=True))
    return results


def _as_if_alone(result: _EraResult, first: _EraResult | None) -> bool:
    """Whether a result from a process that served other sessions first stands for a new process's: a
    complete one does; a refusal only where the same era's first session met the same one."""
    if result.status == "ok":
        return True
    return first is not None and result.status.startswith("unsupported") and result.status == first.status


@dataclass
class _Connection:
    """A server process that serves several sessions in turn."""

    streams: Any
    errlog: TextIO
    turn: int
    """Which session this is, from 0: the request ids are the session's own (see `_LaneReader`)."""


_ID_SPAN = 1_000_000
"""Request ids of one session on a shared connection: turn × span up."""


class _LaneReader:
    """A session's read end of a shared connection: not closed with the session, and the answers to
    earlier sessions' requests (one cancelled in a timeout, say) are not taken for this one's."""

    def __init__(self, inner: Any, turn: int) -> None:
        self._inner = inner
        self._base = turn * _ID_SPAN

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            message = getattr(item, "message", None)
            if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError) or not isinstance(message.id, int):
                return item
            if self._base <= message.id < self._base + _ID_SPAN:
                return SessionMessage(message.model_copy(update={"id": message.id - self._base}), item.metadata)

    def __aiter__(self) -> _LaneReader:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        pass

    async def __aenter__(self) -> _LaneReader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass


class _LaneWriter:
    """A session's write end of a shared connection: its request ids moved into the session's range."""

    def __init__(self, inner: Any, turn: int) -> None:
        self._inner = inner
        self._base = turn * _ID_SPAN

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        if self._base and isinstance(message, types.JSONRPCRequest) and isinstance(message.id, int):
            item = SessionMessage(message.model_copy(update={"id": message.id + self._base}), item.metadata)
        elif (
            self._base
            and isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
        ):
            params = dict(message.params or {})
            if isinstance(params.get("requestId"), int):
                params["requestId"] += self._base
                item = SessionMessage(message.model_copy(update={"params": params}), item.metadata)
        await self._inner.send(item)

    async def aclose(self) -> None:
        pass

    async def __aenter__(self) -> _LaneWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass


@contextlib.asynccontextmanager
async def _borrowed(connection: _Connection) -> Any:
    read, write = connection.streams
    yield _LaneReader(read, connection.turn), _LaneWriter(write, connection.turn)


async def _snapshot_era(
    target: SnapshotTarget,
    era: str,
    timeout: float,
    profile: ClientProfile,
    probe: bool,
    connection: _Connection | None = None,
) -> _EraResult:
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
            leaves = list(_leaves(exc))
            failure = next((leaf for leaf in leaves if isinstance(leaf, _EraFailure)), None)
            timed_out = failure is None and any(isinstance(leaf, TimeoutError) for leaf in leaves)
            if failure is not None:
                status = failure.status
            elif timed_out:
                status = f"error: timed out after {timeout:g} s"
            else:
                status = f"error: {_describe(exc)}"
            return _EraResult(era, _with_stderr(noise.status(status, timed_out, timeout), errlog))


async def _open_transport(target: SnapshotTarget, stack: AsyncExitStack, timeout: float, errlog: TextIO) -> Any:
    if target.url:
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=target.headers or {}, timeout=httpx2.Timeout(timeout))
        )
        return streamable_http_client(target.url, http_client=http)
    assert target.command
    quiet_client_log()
    # "replace": bytes that are no UTF-8 become a line to report, not a decoding error that ends the session.
    params = StdioServerParameters(
        command=target.command[0],
        args=list(target.command[1:]),
        env=target.env,
        cwd=target.cwd,
        encoding_error_handler="replace",
    )
    return stdio_client(params, errlog=errlog)


async def _connect_and_read(
    target: SnapshotTarget,
    era: str,
    timeout: float,
    errlog: TextIO,
    profile: ClientProfile,
    probe: bool,
    noise: StdoutNoise,
    connection: _Connection | None = None,
) -> _EraResult:
    changed: set[str] = set()

    async def on_message(message: Any) -> None:
        noise.add(message)
        for list_name in _CHANGE_NOTIFICATIONS.get(getattr(message, "method", ""), ()):
            changed.add(list_name)

    async with AsyncExitStack() as stack:
        transport = _borrowed(connection) if connection else await _open_transport(target, stack, timeout, errlog)
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
            refusal = next((leaf for leaf in _leaves(exc) if isinstance(leaf, MCPError)), None)
            if refusal is None:
                raise
            step = "initialize" if era == "legacy" else "connect"
            raise _EraFailure(_rejection(step, refusal)) from exc
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
            lists[spec.name], stats[spec.name] = await _fetch_list(session, spec, capabilities, changed, ttl)
        # Not part of the contract, but a long cache lifetime without listChanged is worth a lint.
        server["listTtlMs"] = ttl
        errors = await _probe_errors(session, era, capabilities, lists["tools"])
        if era == "legacy":
            server.update(await _whole_capabilities(target, session, server, timeout, profile))
        if era == "legacy" and probe:
            server.update(await _probe_legacy_versions(target, session, server["protocolVersion"], timeout, profile))
        return _EraResult(era, "ok", lists, server, errors, stats)


async def _fresh_initialize(
    target: SnapshotTarget, version: str, timeout: float, profile: ClientProfile
) -> dict[str, Any]:
    """One `initialize` on a new session (a new process on stdio), its raw result."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
        async with AsyncExitStack() as stack:
            transport = await _open_transport(target, stack, timeout, errlog)
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
            raw = await _fresh_initialize(target, version, timeout, profile)
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
        return await _fresh_initialize(target, version, timeout, profile)

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
    try:
        raw: dict[str, Any] = await session.send_discover(LATEST_MODERN_VERSION)
    except MCPError as exc:
        raise _EraFailure(_rejection("server/discover", exc)) from exc
    try:
        result = types.DiscoverResult.model_validate(raw)
        session.adopt(result)
    except (ValidationError, RuntimeError) as exc:
        raise _EraFailure(f"unsupported: server/discover answered with an unusable result: {exc}") from exc
    return raw


def _rejection(step: str, exc: MCPError) -> str:
    # The SDK reports a dropped connection as -32000 "Connection closed"; a server may send -32000 itself
    # (TypeScript 1.x servers do, for a sessionless modern request), which is a refusal, not a failure.
    transport = exc.code in _TRANSPORT_FAILURES and (
        exc.code != types.CONNECTION_CLOSED or "connection closed" in (exc.message or "").lower()
    )
    prefix = "error" if transport else "unsupported"
    supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
    extra = f" (supported: {', '.join(map(str, supported))})" if isinstance(supported, list) else ""
    return f"{prefix}: {step} failed with {exc.code} {exc.message}{extra}"


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


# -- lists -----------------------------------------------------------------------------------------


async def _fetch_list(
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
        except _ListChanged:
            previous = None
            continue
        if pages <= 1 or (previous is not None and entries == previous):
            return normalize_entries(spec, entries), {"pages": pages, "walks": walk}
        previous = entries
    raise _EraFailure(f"error: {spec.name} list kept changing across {MAX_WALKS} walks")


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
            raw = await _send_raw(session, request_type(params=types.PaginatedRequestParams(cursor=cursor)))
        except MCPError as exc:
            if cursor is not None and exc.code == types.INVALID_PARAMS:
                raise _ListChanged from exc  # the cursor expired: the list changed under us
            if cursor is None and exc.code == types.METHOD_NOT_FOUND:
                return [], 0
            raise _EraFailure(f"error: {spec.name} list failed with {exc.code} {exc.message}") from exc
        if cursor is None and isinstance(raw.get("ttlMs"), int) and not isinstance(raw.get("ttlMs"), bool):
            ttl[spec.name] = raw["ttlMs"]
        for entry in raw.get(spec.result_field) or []:
            if not isinstance(entry, dict):
                continue
            key = entry_key(spec, entry)
            if key in seen:
                raise _ListChanged
            seen.add(key)
            entries.append(entry)
        if spec.name in changed:
            raise _ListChanged
        cursor = raw.get("nextCursor")
        if not cursor:
            return entries, page
        if cursor in cursors:
            raise _EraFailure(f"error: {spec.name} list repeats cursor {cursor!r}")
        cursors.add(cursor)
    raise _EraFailure(f"error: {spec.name} list has more than {MAX_PAGES} pages")


# -- error probes ----------------------------------------------------------------------------------


async def _probe_errors(
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
            probes["unsupported_protocol_version"] = _jsonrpc_error(exc)
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


async def _send_raw(session: ClientSession, request: types.Request[Any, Any]) -> dict[str, Any]:
    """The request's result as the server's raw JSON object. The SDK types `send_request`'s result type as a
    pydantic model; a TypeAdapter of a plain dict validates and returns the same way at run time."""
    raw: dict[str, Any] = await session.send_request(request, _RAW)  # type: ignore[type-var]
    return raw


async def _probe(session: ClientSession, request: types.Request[Any, Any]) -> dict[str, Any]:
    try:
        raw = await _send_raw(session, request)
    except MCPError as exc:
        return _jsonrpc_error(exc)
    except ValidationError as exc:
        return {"mode": "failed", "message": _first_line(str(exc))}
    if raw.get("isError") is True:
        texts = [c.get("text", "") for c in raw.get("content") or [] if isinstance(c, dict)]
        return {"mode": "tool_error", "message": _first_line(texts[0] if texts else "")}
    return {"mode": "success"}


def _jsonrpc_error(exc: MCPError) -> dict[str, Any]:
    record: dict[str, Any] = {"mode": "jsonrpc_error", "code": exc.code, "message": _first_line(exc.message)}
    if isinstance(exc.data, dict) and isinstance(exc.data.get("supported"), list):
        record["supported"] = sorted(exc.data["supported"])
    return record


# -- reporting helpers -----------------------------------------------------------------------------


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:limit]


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def _describe(exc: BaseException) -> str:
    parts = []
    for leaf in _leaves(exc):
        text = f"{type(leaf).__name__}: {leaf}".strip()
        if text not in parts:
            parts.append(text)
    return "; ".join(parts)[:500]


def _with_stderr(status: str, errlog: TextIO, lines: int = 5) -> str:
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
