"""Helpers for the source tests: sources pointed at the fake registry, and one-call fetches."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx

from tests.fakes.registry_server import FIXTURE_SOURCES as FIXTURE_SOURCES  # one source per recorded package
from tests.fakes.registry_server import REGISTRY_ROOTS, FakeRegistry
from watcher.sources import ADAPTERS
from watcher.sources.base import MemoryHttpCache, RegistryHttp, Release
from watcher.sources.settings import HttpSettings, SdkSource

T = TypeVar("T")

ROOTS = REGISTRY_ROOTS


def source(registry: FakeRegistry, kind: str, package: str, folder: str | None = None) -> SdkSource:
    name = "".join(c if c.isalnum() else "-" for c in f"{kind}-{package}").strip("-")
    return SdkSource(name=name, registry=kind, package=package, url=registry.url(folder or ROOTS[kind]))


def settings(*, retries: int = 0, backoff: float = 0.0, timeout: float = 5.0) -> HttpSettings:
    return HttpSettings(retries=retries, backoff_seconds=backoff, timeout_seconds=timeout)


def run_with_http(
    body: Callable[[Callable[[], RegistryHttp]], Awaitable[T]],
    http_settings: HttpSettings | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
) -> T:
    """Run ``body(new_http)`` in a fresh event loop with one loopback-only httpx client."""

    async def main() -> T:
        async with httpx.AsyncClient(trust_env=False) as client:

            def new_http() -> RegistryHttp:
                extra: dict[str, Any] = {"sleep": sleep} if sleep is not None else {}
                return RegistryHttp(client, MemoryHttpCache(), http_settings or settings(), **extra)

            return await body(new_http)

    return asyncio.run(main())


def fetch(src: SdkSource, http_settings: HttpSettings | None = None) -> list[Release]:
    async def body(new_http: Callable[[], RegistryHttp]) -> list[Release]:
        return await ADAPTERS[src.registry](new_http(), src)

    return run_with_http(body, http_settings)


def by_version(releases: list[Release]) -> dict[str, Release]:
    return {r.version: r for r in releases}
