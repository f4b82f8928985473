"""A registry's Retry-After is waited out only while the service runs: on stop (SIGTERM sets the service's stop
event) the wait ends at once and the poll is a failure with that reason, not a wedged shutdown."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest

from tests.fakes.github_server import FakeGitHub
from watcher.sources import github
from watcher.sources.base import MemoryHttpCache, RegistryHttp, SourceError
from watcher.sources.settings import HttpSettings, SdkSource


def test_a_retry_after_wait_ends_when_the_service_stops():
    settings = HttpSettings(retries=3, backoff_seconds=0, max_retry_after_seconds=60, timeout_seconds=5)
    source = SdkSource(name="kotlin", registry="github", package="acme/kotlin-sdk")
    stop = threading.Event()
    with FakeGitHub() as gh:
        gh.set_releases("acme/kotlin-sdk", [FakeGitHub.release("v1.0.0", "2026-10-01T10:00:00Z")])
        gh.fail_next("/repos/acme/kotlin-sdk/releases", status=429, times=5, headers={"retry-after": "50"})
        source = source.model_copy(update={"url": gh.api_url})

        async def poll() -> None:
            async with httpx.AsyncClient() as client:
                http = RegistryHttp(client=client, cache=MemoryHttpCache(), settings=settings, stop=stop)
                await github.fetch(http, source)

        threading.Timer(0.3, stop.set).start()
        began = time.monotonic()
        with pytest.raises(SourceError, match="the service is stopping"):
            asyncio.run(poll())
        assert time.monotonic() - began < 10
        assert gh.count("/repos/acme/kotlin-sdk/releases") == 1  # no second request after the stop
