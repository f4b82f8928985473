"""The one small interface every registry adapter implements, and the HTTP client they share.

An adapter is an async function ``fetch(http, source) -> list[Release]``. It asks ``http`` for the
documents it needs; ``http`` makes conditional requests (ETag / Last-Modified), retries with
backoff, counts requests and bytes, and keeps the last good body so that a 304 costs one small
request and the adapter can still parse. Its waits (backoff, ``Retry-After``) end when the service's
stop event is set, and the poll deadline bounds them all. A registry that is down or returns garbage raises
``SourceError`` with a reason; the poller records it as a failed poll.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import httpx

from watcher.core import untrusted
from watcher.core.errors import SourceError as SourceError
from watcher.core.schemes import VersionScheme
from watcher.core.store_schema import HttpCacheRow
from watcher.sources.settings import HttpSettings, SdkSource


@dataclass(frozen=True)
class RegistryInfo:
    """The facts about one registry, declared once as ``REGISTRY`` in its adapter module."""

    name: str
    """What a source's ``registry:`` says in the configuration."""
    scheme: VersionScheme
    """How the registry's versions are spelled, ordered and marked as pre-releases."""
    project_page: str | None
    """The public page of one version: a template with ``{package}`` and ``{version}`` (and, for Maven
    coordinates ``group:artifact``, ``{group}`` and ``{artifact}``); None where the page is not linked."""

    def page(self, package: str, version: str) -> str | None:
        if self.project_page is None:
            return None
        group, _, artifact = package.partition(":")
        return self.project_page.format(package=package, version=version, group=group, artifact=artifact)


class ResponseTooLarge(SourceError):
    """The answer exceeded ``http_client.max_response_bytes``: refused, not retried, never cached."""


@dataclass(frozen=True)
class Release:
    version: str
    published: datetime | None
    """The registry's own time for this version (UTC); None when the registry does not say."""
    prerelease: bool
    yanked: bool = False
    """Yanked, unlisted, retracted or deprecated by the publisher."""
    note: str | None = None


@dataclass
class FetchStats:
    requests: int = 0
    bytes: int = 0
    not_modified: int = 0


class HttpCache(Protocol):
    def http_cache_get(self, url: str) -> HttpCacheRow | None: ...

    def http_cache_put(self, url: str, etag: str | None, last_modified: str | None, body: bytes) -> None: ...


class MemoryHttpCache:
    """An HttpCache for one-off use (tests, benchmarks without a database)."""

    def __init__(self) -> None:
        self.entries: dict[str, HttpCacheRow] = {}

    def http_cache_get(self, url: str) -> HttpCacheRow | None:
        return self.entries.get(url)

    def http_cache_put(self, url: str, etag: str | None, last_modified: str | None, body: bytes) -> None:
        self.entries[url] = HttpCacheRow(url=url, etag=etag, last_modified=last_modified, body=body)


@dataclass
class Fetched:
    body: bytes
    not_modified: bool
    url: str

    def document(self) -> Any:
        """The answer's JSON, read by the one loader for outside data (its depth capped); a SourceError naming
        the URL when it is not JSON."""
        try:
            return untrusted.answer_json(self.body, self.url)
        except ValueError as exc:
            raise SourceError(str(exc)) from exc

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


@dataclass
class RegistryHttp:
    """Conditional, retrying GETs against one source; counts what it costs."""

    client: httpx.AsyncClient
    cache: HttpCache
    settings: HttpSettings = field(default_factory=HttpSettings)
    stats: FetchStats = field(default_factory=FetchStats)
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    stop: threading.Event | None = None
    """The service's stop event (SIGTERM): a wait to retry ends when it is set, and the poll fails."""

    async def pause(self, seconds: float) -> None:
        """Wait `seconds` before asking again; a SourceError as soon as the service stops."""
        if self.stop is None:
            await self.sleep(seconds)
            return
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            if self.stop.is_set():
                raise SourceError("the service is stopping: the poll ended before its retry")
            await self.sleep(min(left, 0.1))

    async def get(
        self, url: str, *, headers: dict[str, str] | None = None, immutable: bool = False, allow_404: bool = False
    ) -> Fetched | None:
        """GET url. ``immutable``: a cached body is reused without asking again (e.g. Go's .info files).

        Returns None only for a 404 when ``allow_404`` is set.
        """
        cached = self.cache.http_cache_get(url)
        if immutable and cached is not None:
            return Fetched(body=cached["body"], not_modified=True, url=url)
        request_headers = dict(headers or {})
        if cached is not None:
            if etag := cached.get("etag"):
                request_headers["If-None-Match"] = etag
            if last_modified := cached.get("last_modified"):
                request_headers["If-Modified-Since"] = last_modified
        response, body = await self._get_with_retries(url, request_headers)
        if response.status_code == 304 and cached is not None:
            self.stats.not_modified += 1
            return Fetched(body=cached["body"], not_modified=True, url=url)
        if response.status_code == 404 and allow_404:
            return None
        if response.status_code != 200:
            raise SourceError(f"{url}: HTTP {response.status_code} {response.reason_phrase}".rstrip())
        self.cache.http_cache_put(url, response.headers.get("etag"), response.headers.get("last-modified"), body)
        return Fetched(body=body, not_modified=False, url=url)

    async def _get_with_retries(self, url: str, headers: dict[str, str]) -> tuple[httpx.Response, bytes]:
        attempts = self.settings.retries + 1
        last_problem = ""
        deadline = self.settings.request_deadline_seconds
        for attempt in range(attempts):
            if attempt:
                await self.pause(self.settings.backoff_seconds * (2 ** (attempt - 1)))
            try:
                response, body = await asyncio.wait_for(self._read_limited(url, headers), timeout=deadline)
            except TimeoutError:
                self.stats.requests += 1
                last_problem = f"no complete answer within the {deadline:g} s request deadline"
                continue
            except httpx.TimeoutException:
                self.stats.requests += 1
                last_problem = f"timed out after {self.settings.timeout_seconds:g} s"
                continue
            except httpx.HTTPError as exc:
                self.stats.requests += 1
                last_problem = f"{type(exc).__name__}: {exc}"
                continue
            self.stats.requests += 1
            self.stats.bytes += len(body) + _header_bytes(response)
            if response.status_code == 429 or response.status_code >= 500:
                last_problem = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
                retry_after = _retry_after_seconds(response)
                if retry_after is not None and retry_after > self.settings.max_retry_after_seconds:
                    last_problem += f" asking to wait {retry_after:g} s"
                    break  # not worth blocking the poll: the next poll tries again
                if retry_after is not None and attempt + 1 < attempts:
                    await self.pause(retry_after)
                continue
            return response, body
        raise SourceError(f"{url}: {last_problem} (after {attempt + 1} attempts)")

    async def _read_limited(self, url: str, headers: dict[str, str]) -> tuple[httpx.Response, bytes]:
        """Stream the body and stop at ``max_response_bytes``: a huge answer never sits in memory or the cache."""
        limit = self.settings.max_response_bytes
        async with self.client.stream("GET", url, headers=headers, timeout=self.settings.timeout_seconds) as response:
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > limit:
                raise ResponseTooLarge(f"{url}: answer of {int(declared):,} bytes refused (limit {limit:,} bytes)")
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise ResponseTooLarge(f"{url}: answer larger than {limit:,} bytes refused")
                chunks.append(chunk)
            return response, b"".join(chunks)


def _header_bytes(response: httpx.Response) -> int:
    return sum(len(k) + len(v) + 4 for k, v in response.headers.raw)


def _retry_after_seconds(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


Adapter = Callable[[RegistryHttp, SdkSource], Awaitable[list[Release]]]
"""fetch(http, source) → every version the registry lists for source.package."""
