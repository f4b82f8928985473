"""A local fake package registry: serves fixture files over real HTTP on 127.0.0.1.

Usage (a context manager; as a pytest fixture, ``yield`` from inside the ``with``)::

    from bench.fakes.registry_server import FIXTURES, serve_registry

    with serve_registry() as registry:            # root defaults to FIXTURES
        registry.base                              # "http://127.0.0.1:PORT"
        registry.url("pypi/simple")                # base + "/pypi/simple": a source's ``url:``
        registry.fail("/pypi/simple/mcp/", status=500)                   # every request, until cleared
        registry.fail(path, status=429, retry_after=1, times=1)          # once, then the fixture again
        registry.fail(path, malformed=True)        # 200 with the fixture cut in half (broken JSON/XML)
        registry.fail(path, hang=True)             # never answers (until stop): client timeouts
        registry.fail(path, trickle=0.5)           # the fixture, one byte every 0.5 s (each read is quick)
        registry.fail(path, oversize=50_000_000)   # 200, that many bytes, no Content-Length, 64 KiB chunks
        registry.clear_faults()
        registry.stats.requests, .bytes, .not_modified, .by_path["/pypi/simple/mcp/"]
        registry.reset_stats()

Request path → file (the path is URL-decoded first, so npm's ``@scope%2fname`` → ``@scope/name``):
``<root>/<path>``, else ``<path>.json``, else ``<path>/index.json``. With a query string, a file
named ``<path>__<query>`` (every character outside ``[A-Za-z0-9._-]`` turned into ``_``; ``.json``
optional) wins, else the query is ignored. Fault paths are matched without the query.

Every text body has ``{{BASE}}`` replaced with the server's base URL: recorded fixtures keep their
file / tarball / page URLs that way without naming the real registry. Responses carry an ETag
(hash of the body) and Last-Modified (the file's mtime) and answer 304 to a matching
If-None-Match, or, without one, to an If-Modified-Since not older than the file.

``stats`` counts every request and the body bytes sent (counted before the answer goes out, so a
client holding its response always finds it counted). ``stop()`` (or leaving the ``with``)
releases hung requests, shuts the server down and joins its thread.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "registries"

# One source per recorded package: (registry, package, the folder standing for the registry's root).
REGISTRY_ROOTS = {
    "pypi": "pypi/simple",
    "npm": "npm",
    "nuget": "nuget/v3",
    "goproxy": "goproxy",
    "crates": "crates",
    "maven": "maven",
    "rubygems": "rubygems",
    "packagist": "packagist",
    "github": "github",
}
"""Registry kind → the folder of the recordings that stands for its root (what a source's ``url:`` points at)."""

FIXTURE_SOURCES = [
    ("pypi", "mcp", "pypi/simple"),
    ("pypi", "mcp", "pypi/crafted"),
    ("npm", "@modelcontextprotocol/sdk", "npm"),
    ("npm", "@modelcontextprotocol/server", "npm"),
    ("npm", "@modelcontextprotocol/client", "npm"),
    ("nuget", "ModelContextProtocol", "nuget/v3"),
    ("nuget", "ModelContextProtocol.AspNetCore", "nuget/v3"),
    ("nuget", "ModelContextProtocol.Core", "nuget/v3"),
    ("goproxy", "github.com/modelcontextprotocol/go-sdk", "goproxy"),
    ("goproxy", "github.com/modelcontextprotocol/registry", "goproxy"),
    ("crates", "rmcp", "crates"),
    ("crates", "rmcp-macros", "crates"),
    ("maven", "io.modelcontextprotocol.sdk:mcp", "maven"),
    ("maven", "io.modelcontextprotocol.sdk:mcp-spring-webflux", "maven"),
    ("maven", "io.modelcontextprotocol:kotlin-sdk", "maven"),
    ("rubygems", "mcp", "rubygems"),
    ("packagist", "mcp/sdk", "packagist"),
    ("packagist", "php-mcp/server", "packagist"),
    ("github", "modelcontextprotocol/swift-sdk", "github"),
    ("github", "modelcontextprotocol/modelcontextprotocol", "github"),
    ("github", "modelcontextprotocol/go-sdk", "github"),
]

PLACEHOLDER = b"{{BASE}}"
HANG_LIMIT_SECONDS = 60.0
"""A hung request is answered with nothing and closed after this long even if nobody stops the server."""

_CONTENT_TYPES = {".json": "application/json", ".xml": "application/xml", ".info": "application/json"}
PEP691 = "application/vnd.pypi.simple.v1+json"


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default backlog (5) drops connections when 20 polls start at once


@dataclass
class Fault:
    status: int | None = None
    retry_after: float | None = None
    malformed: bool = False
    hang: bool = False
    times: int | None = None
    """How many requests it answers; None: all of them."""
    trickle: float | None = None
    """Seconds between single bytes of the body."""
    oversize: int | None = None
    """Bytes of filler to send instead of the fixture."""


@dataclass
class Stats:
    requests: int = 0
    bytes: int = 0
    not_modified: int = 0
    by_path: Counter[str] = field(default_factory=Counter)


class FakeRegistry:
    def __init__(self, root: Path = FIXTURES) -> None:
        self.root = Path(root).resolve()
        self.stats = Stats()
        self._faults: dict[str, Fault] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name="fake-registry", daemon=True
        )

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str = "") -> str:
        return f"{self.base}/{path.lstrip('/')}" if path else self.base

    def start(self) -> FakeRegistry:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def fail(
        self,
        path: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        malformed: bool = False,
        hang: bool = False,
        times: int | None = None,
        trickle: float | None = None,
        oversize: int | None = None,
    ) -> None:
        if sum([status is not None, malformed, hang, trickle is not None, oversize is not None]) != 1:
            raise ValueError("give exactly one of status=, malformed=True, hang=True, trickle=, oversize=")
        with self._lock:
            self._faults[_path_only(path)] = Fault(status, retry_after, malformed, hang, times, trickle, oversize)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def reset_stats(self) -> None:
        with self._lock:
            self.stats = Stats()

    # --- used by the handler -----------------------------------------------------------------------

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            fault = self._faults.get(path)
            if fault is None:
                return None
            if fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    del self._faults[path]
            return fault

    def _count(self, path: str, sent: int, not_modified: bool = False) -> None:
        with self._lock:
            self.stats.requests += 1
            self.stats.bytes += sent
            self.stats.by_path[path] += 1
            if not_modified:
                self.stats.not_modified += 1

    def _resolve(self, path: str, query: str) -> Path | None:
        relative = path.lstrip("/")
        candidates = []
        if query:
            named = relative.rstrip("/") + "__" + re.sub(r"[^A-Za-z0-9._-]", "_", query)
            candidates += [named, named + ".json"]
        candidates += [relative, relative.rstrip("/") + ".json", relative.rstrip("/") + "/index.json"]
        for candidate in candidates:
            if not candidate:
                continue
            full = (self.root / candidate).resolve()
            if full.is_relative_to(self.root) and full.is_file():
                return full
        return None


def _path_only(path: str) -> str:
    return "/" + unquote(urlsplit(path).path).lstrip("/")


def _handler_for(registry: FakeRegistry) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            parts = urlsplit(self.path)
            path = _path_only(parts.path)
            fault = registry._take_fault(path)
            if fault is not None and fault.hang:
                registry._count(path, 0)
                registry._stopping.wait(HANG_LIMIT_SECONDS)
                self.close_connection = True
                return
            if fault is not None and fault.oversize is not None:
                self._stream_filler(path, fault.oversize)
                return
            if fault is not None and fault.status is not None:
                body = f"fake registry: injected HTTP {fault.status}\n".encode()
                extra = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
                registry._count(path, len(body))
                self._send(fault.status, body, "text/plain", extra)
                return
            file = registry._resolve(path, parts.query)
            if file is None:
                body = b'{"error": "not found"}\n'
                registry._count(path, len(body))
                self._send(404, body, "application/json")
                return
            body = file.read_bytes().replace(PLACEHOLDER, registry.base.encode())
            content_type = _CONTENT_TYPES.get(file.suffix, "text/plain; charset=utf-8")
            if PEP691 in self.headers.get("Accept", "") and b'"api-version"' in body:
                content_type = PEP691  # a Simple API page asked for as JSON (uv accepts no other JSON type)
            if fault is not None and fault.malformed:
                body = body[: max(1, len(body) // 2)]
                registry._count(path, len(body))
                self._send(200, body, content_type)
                return
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            mtime = int(file.stat().st_mtime)
            validators = {"ETag": etag, "Last-Modified": formatdate(mtime, usegmt=True)}
            if self._not_modified(etag, mtime):
                registry._count(path, 0, not_modified=True)
                self._send(304, b"", None, validators)
                return
            if fault is not None and fault.trickle is not None:
                self._trickle(path, body, content_type, fault.trickle)
                return
            registry._count(path, len(body))
            self._send(200, body, content_type, validators)

        def _stream_filler(self, path: str, size: int) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")  # no Content-Length: the client must count for itself
            self.end_headers()
            chunk = b" " * 65536
            sent = 0
            try:
                while sent < size and not registry._stopping.is_set():
                    part = chunk[: min(len(chunk), size - sent)]
                    self.wfile.write(part)
                    sent += len(part)
            except OSError:
                pass  # the client refused the rest: that is the point
            registry._count(path, sent)
            self.close_connection = True

        def _trickle(self, path: str, body: bytes, content_type: str, pause: float) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            sent = 0
            try:
                for byte in body:
                    if registry._stopping.wait(pause):
                        break
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    sent += 1
            except OSError:
                pass  # the client gave up
            registry._count(path, sent)
            self.close_connection = True

        def _not_modified(self, etag: str, mtime: int) -> bool:
            if_none_match = self.headers.get("If-None-Match")
            if if_none_match is not None:
                tags = [t.strip() for t in if_none_match.split(",")]
                return "*" in tags or etag in tags or f"W/{etag}" in tags
            since = self.headers.get("If-Modified-Since")
            if since:
                try:
                    return int(parsedate_to_datetime(since).timestamp()) >= mtime
                except (TypeError, ValueError):
                    return False
            return False

        def _send(
            self, status: int, body: bytes, content_type: str | None, extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            if content_type:
                self.send_header("Content-Type", content_type)
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            if status != 304:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if status != 304:
                self.wfile.write(body)

    return Handler


@contextmanager
def serve_registry(root: Path = FIXTURES) -> Iterator[FakeRegistry]:
    """Start a FakeRegistry on a free loopback port for the duration of the ``with`` block."""
    registry = FakeRegistry(root).start()
    try:
        yield registry
    finally:
        registry.stop()
