"""The install room's one way out: an HTTP proxy on the host's loopback that allows only the indexes.

The room has no route; its 127.0.0.1:`ROOM_PORT` is forwarded by the relay to this proxy, and its installers
are told so (`room_env`: pip, uv and npm honour `HTTPS_PROXY` / `HTTP_PROXY`). It answers two kinds of request:

- `CONNECT host:port` (HTTPS): a tunnel, once the target and its addresses pass the policy (`egress.py`);
- an absolute-form request (`GET http://host:port/path`, plain HTTP: a mirror or a test's fake on loopback):
  sent on in origin form, one request per connection; an index's answers teach the policy its file hosts.

It resolves names itself (through `Resolver`, which tests replace) and judges every address after resolving;
it serves no DNS (the room's resolv.conf names no server). A refusal is answered 403 and recorded, with the
address when there was one; a target that is allowed but cannot be resolved or reached is answered 502 and not
recorded (a failure, not a refusal). One event loop, in a thread of the watcher, serves every room's proxy.

Stdlib only (asyncio streams): the unprivileged scenes of the tests import it with the system Python.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import logging
import os
import socket
import ssl
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from watcher.boundary.egress import Address, Policy, Target

log = logging.getLogger(__name__)

ROOM_PORT = 3128
"""The proxy's port inside a room (the room's loopback is its own: any port would do)."""
HEAD_LIMIT = 65536
CONNECT_SECONDS = 15.0
HEAD_SECONDS = 30.0
LEARN_SECONDS = 20.0
"""How long the pages read on an HTTPS index before the first tunnel there (`_prime`) may take, all together."""
LEARN_ACCEPT = "application/vnd.pypi.simple.v1+json, application/json;q=0.9, text/html;q=0.5"
LEARN_BYTES = 16 * 1024 * 1024
"""How much of an index's answer is read for file hosts (the rest passes unread)."""
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer", "upgrade"}

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""A name and port to the addresses to try (the proxy's one way to look a name up)."""


async def system_resolver(host: str, port: int) -> list[str]:
    """The machine's resolver (getaddrinfo), run by the event loop."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def room_env(port: int = ROOM_PORT) -> dict[str, str]:
    """What tells a room's installers to go through the proxy (and that no host is exempt from it)."""
    url = f"http://127.0.0.1:{port}"
    env = {name: url for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")}
    env.update(npm_config_proxy=url, npm_config_https_proxy=url, npm_config_noproxy="", NO_PROXY="", no_proxy="")
    return env


class _Refused(Exception):
    """The request was answered (a refusal or a failure); nothing is connected."""


@dataclass(frozen=True)
class Request:
    method: str
    target: Target
    origin_form: str
    headers: list[tuple[str, str]]


@functools.cache
def _loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="egress-proxy", daemon=True).start()
    return loop


class EgressProxy:
    """One room's proxy: listening on the host's 127.0.0.1 (a free port), allowing what `policy` allows."""

    def __init__(
        self,
        policy: Policy,
        resolver: Resolver = system_resolver,
        learn_urls: Sequence[str] = (),
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.policy = policy
        self.tls = tls
        """How the proxy's own page reads check an index's certificate (None: the system's trust store)."""
        self.resolver = resolver
        self.learn_urls = tuple(learn_urls)
        """Pages (the SDK's, on each index) read for the file hosts they name before the first tunnel there."""
        self._primed: set[Target] = set()
        self.port = 0
        self._server: asyncio.base_events.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    def start(self) -> int:
        """Start listening; returns the port."""
        future = asyncio.run_coroutine_threadsafe(self._start(), _loop())
        self.port = future.result(timeout=CONNECT_SECONDS)
        return self.port

    async def _start(self) -> int:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, limit=HEAD_LIMIT)
        return int(self._server.sockets[0].getsockname()[1])

    def close(self) -> None:
        """Stop listening and cut every connection still open."""
        if self._server is None:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._stop(), _loop()).result(timeout=CONNECT_SECONDS)
        self._server = None

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()

    async def _prime(self, target: Target) -> None:
        """Before the first tunnel to an HTTPS index: read the pages of `learn_from` on it for the file hosts
        they name (its answers cross the proxy encrypted, so the watcher asks the index itself, as the installer
        is about to, under the same rules). Only when the installer goes there: no request of the proxy's own
        goes anywhere an install does not. A page that cannot be had teaches nothing (the install may fail)."""
        if target in self._primed:
            return
        self._primed.add(target)
        urls = [url for url in self.learn_urls if url.startswith("https://") and Target.of_url(url) == target]
        if not urls:
            return
        learned = asyncio.gather(*(self._learn(url) for url in urls), return_exceptions=True)
        try:
            await asyncio.wait_for(learned, LEARN_SECONDS)
        except TimeoutError:
            log.info("the egress proxy learned no file hosts from %s within %.0f s", target, LEARN_SECONDS)

    async def _learn(self, url: str) -> None:
        target, parts = Target.of_url(url), urlsplit(url)
        if target is None or not self.policy.is_index(target):
            return
        addresses = [ipaddress.ip_address(a) for a in await self.resolver(target.host, target.port)]
        usable = [a for a in addresses if self.policy.judge_address(target, a) is None]
        if not usable:
            return
        tls = (self.tls or ssl.create_default_context()) if parts.scheme == "https" else None
        opened = asyncio.open_connection(
            str(usable[0]), target.port, ssl=tls, server_hostname=target.host if tls else None
        )
        reader, writer = await asyncio.wait_for(opened, CONNECT_SECONDS)
        try:
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            head = f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept: {LEARN_ACCEPT}\r\n"
            writer.write(
                (head + "Accept-Encoding: identity\r\nUser-Agent: mcp-watcher\r\nConnection: close\r\n\r\n").encode()
            )
            await writer.drain()
            tail, read = b"", 0
            while read < LEARN_BYTES and (chunk := await reader.read(65536)):
                self.policy.learn(target, tail + chunk)
                tail, read = chunk[-2048:], read + len(chunk)
        finally:
            with contextlib.suppress(OSError, RuntimeError):
                writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open.add(writer)
        try:
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, _Refused):
            pass
        finally:
            self._open.discard(writer)
            with contextlib.suppress(OSError, RuntimeError):
                writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_SECONDS)
        request = parse_request(head)
        if request is None:
            await _answer(writer, 400, "not a proxy request (CONNECT host:port, or an absolute http:// URL)")
            return
        if request.method == "CONNECT" and self.policy.is_index(request.target):
            await self._prime(request.target)
        up_reader, up_writer = await self._connect(request.target, writer)
        self._open.add(up_writer)
        try:
            if request.method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
                await _both_ways(reader, writer, up_reader, up_writer)
            else:
                await self._forward(request, reader, writer, up_reader, up_writer)
        finally:
            self._open.discard(up_writer)
            with contextlib.suppress(OSError, RuntimeError):
                up_writer.close()

    async def _connect(
        self, target: Target, client: asyncio.StreamWriter
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to `target`, once it and its addresses pass the policy; else the client is answered."""
        rule = self.policy.judge_target(target)
        if rule is not None and not self.policy.refuse(target, rule).let_through:
            await _answer(client, 403, f"{target} is not an index of this install ({rule})")
            raise _Refused
        try:
            addresses = [ipaddress.ip_address(a) for a in await self.resolver(target.host, target.port)]
        except (OSError, ValueError) as exc:
            await self._failed(client, f"{target.host} cannot be resolved: {exc}")
            raise _Refused from exc
        chosen: Address | None = None
        for address in addresses:
            refused_by = self.policy.judge_address(target, address)
            # (Under audit, a target refused above is recorded once, not again for each address.)
            recorded = refused_by is not None and rule is None
            if recorded and not self.policy.refuse(target, str(refused_by), str(address)).let_through:
                await _answer(client, 403, f"{target} resolves to {address}: not for installs ({refused_by})")
                raise _Refused
            chosen = chosen or address
        if chosen is None:
            await self._failed(client, f"{target.host} cannot be resolved: it has no address")
            raise _Refused
        try:
            return await asyncio.wait_for(asyncio.open_connection(str(chosen), target.port), CONNECT_SECONDS)
        except (OSError, TimeoutError) as exc:
            why = os.strerror(exc.errno) if isinstance(exc, OSError) and exc.errno else str(exc) or "timed out"
            await self._failed(client, f"{target} cannot be reached: {why}")
            raise _Refused from exc

    async def _failed(self, client: asyncio.StreamWriter, text: str) -> None:
        """An allowed request that failed: answered 502, and noted for the step's blame (not a refusal)."""
        self.policy.note_failure(text)
        await _answer(client, 502, text)

    async def _forward(
        self,
        request: Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        up_reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
    ) -> None:
        """One plain-HTTP request, sent on in origin form; its answer back with `Connection: close`."""
        index = self.policy.is_index(request.target)
        lines = [f"{request.method} {request.origin_form} HTTP/1.1"]
        for name, value in request.headers:
            if name.lower() in _HOP_BY_HOP or (index and name.lower() == "accept-encoding"):
                continue  # an index's answer is read for file hosts: ask for it uncompressed
            lines.append(f"{name}: {value}")
        up_writer.write(("\r\n".join([*lines, "Connection: close"]) + "\r\n\r\n").encode("latin-1"))
        await up_writer.drain()
        body = asyncio.ensure_future(_pump(reader, up_writer))
        try:
            answer_head = await asyncio.wait_for(up_reader.readuntil(b"\r\n\r\n"), HEAD_SECONDS)
            writer.write(_close_after(answer_head))
            tail = b""
            read = 0
            while chunk := await up_reader.read(65536):
                writer.write(chunk)
                await writer.drain()
                if index and read < LEARN_BYTES:
                    self.policy.learn(request.target, tail + chunk)
                    tail, read = chunk[-2048:], read + len(chunk)
        finally:
            body.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await body


def parse_request(head: bytes) -> Request | None:
    """A proxy request's line and headers; None when it is neither CONNECT nor an absolute http:// URL."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return None
    method, uri, _ = parts
    headers = [(n.strip(), v.strip()) for n, _, v in (line.partition(":") for line in lines[1:] if ":" in line)]
    if method == "CONNECT":
        target = Target.of_url(f"https://{uri}/")
        return Request(method, target, "", headers) if target is not None and ":" in uri else None
    if not uri.lower().startswith("http://"):
        return None
    target = Target.of_url(uri)
    if target is None:
        return None
    rest = uri[len("http://") :]
    slash = rest.find("/")
    return Request(method, target, rest[slash:] if slash >= 0 else "/", headers)


def _close_after(head: bytes) -> bytes:
    lines = head.decode("latin-1").split("\r\n")
    kept = [line for line in lines[1:] if line and line.split(":", 1)[0].strip().lower() not in _HOP_BY_HOP]
    return ("\r\n".join([lines[0], *kept, "Connection: close"]) + "\r\n\r\n").encode("latin-1")


async def _answer(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = f"mcp-watcher egress proxy: {text}\n".encode()
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
    writer.write(head.encode() + b"Connection: close\r\n\r\n" + body)
    with contextlib.suppress(OSError):
        await writer.drain()


async def _pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if dst.can_write_eof():
                dst.write_eof()


async def _both_ways(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
) -> None:
    await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
