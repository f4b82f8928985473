"""GitHub REST calls for the github-actions executor, on httpx: retries, and rate limits waited out.

`retry-after` (primary or secondary limit) is obeyed; `x-ratelimit-remaining: 0` waits for
`x-ratelimit-reset`, also before the next call after an answer that spent the quota; a 403/429
naming a secondary rate limit without a header waits a minute. 5xx and transport errors retry
with backoff (`http_client.retries`).

Every wait ends at once when the service stops (`stop`, set by SIGTERM: `Interrupted`), and none
runs past the run's deadline: a wait longer than the time left is an ActionsError at once. A call
that may have been carried out although its answer was lost (`unsafe=True`: a POST answered 5xx or
not at all) is never retried here; it raises `Uncertain` so the caller can look it up first.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from watcher.core import untrusted
from watcher.sources.settings import HttpSettings
from watcher.suites.executors.budget import BUDGET

log = logging.getLogger(__name__)

API_VERSION = "2022-11-28"
MAX_RATE_WAIT = 900.0
"""Longest single wait for a rate limit; the run's own timeout still applies."""
SECONDARY_WAIT = 60.0
"""GitHub asks for at least a minute after a secondary rate limit without retry-after."""


class ActionsError(Exception):
    """The run could not be carried out or judged on GitHub Actions; the message is the reason."""


class Interrupted(Exception):
    """The service is stopping: a wait ended early."""


class TooLarge(ActionsError):
    """An answer over the `max_bytes` it was read with."""


class Uncertain(ActionsError):
    """An unsafe call (a POST) got no clear answer: it may have been carried out."""


@dataclass
class GitHubApi:
    """GitHub REST calls with retries and rate-limit waits, on the project's HTTP client (httpx)."""

    base: str
    token: str
    client: httpx.Client
    settings: HttpSettings
    wait: Callable[[float], None]
    rate_waits: list[float] = field(default_factory=list)
    stop: threading.Event | None = None
    """The service's stop event: every wait ends when it is set."""
    deadline: float | None = None
    """time.monotonic() by which the run must be over: no wait goes past it."""
    _reset_at: float | None = None

    def sleep(self, seconds: float, why: str, *, clip: bool = False) -> None:
        """Wait `seconds`, ending early on stop (Interrupted). Past the deadline: clipped to it with `clip`
        (a loop that checks its own deadline), else an ActionsError at once (no point waiting to fail)."""
        if self.deadline is not None:
            left = max(0.0, self.deadline - time.monotonic())
            if seconds > left:
                if not clip:
                    raise ActionsError(
                        f"{why}: asked to wait {seconds:.0f} s, past the run's deadline "
                        f"({left:.0f} s left of executor.timeout_minutes)"
                    )
                seconds = left
        if self.stop is not None:
            if self.stop.wait(seconds):
                raise Interrupted()
            return
        self.wait(seconds)

    def headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": self.settings.user_agent,
        }

    def call(
        self, method: str, path: str, *, unsafe: bool = False, max_bytes: int | None = None, **kwargs: Any
    ) -> httpx.Response:
        """One REST call, retried and rate-limit aware. With `max_bytes`, the body is streamed and a larger
        one is an ActionsError (declared length first, then as it arrives), never held in memory whole."""
        url = path if path.startswith("http") else f"{self.base.rstrip('/')}{path}"
        problem, attempt, rate_waits = "", 0, 0
        while attempt <= self.settings.retries:
            if self._reset_at is not None:  # the last answer spent the quota: wait for its reset
                self._pause(self._reset_at - time.time())
                self._reset_at = None
            try:
                response = self._request(method, url, max_bytes, **kwargs)
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}"
                if unsafe and not isinstance(exc, httpx.ConnectError):  # it may have arrived
                    raise Uncertain(f"{method} {url}: {problem}") from None
                attempt += 1
                self.sleep(self.settings.backoff_seconds * 2**attempt, f"{method} {url}: backing off after {problem}")
                continue
            BUDGET.observe(response)
            limited = _rate_limit_wait(response)
            if limited is not None and rate_waits < 5:
                rate_waits += 1
                BUDGET.limited += 1
                self._pause(limited)
                continue
            if response.headers.get("x-ratelimit-remaining") == "0" and response.headers.get("x-ratelimit-reset"):
                self._reset_at = float(response.headers["x-ratelimit-reset"])
            if response.status_code >= 500:
                problem = f"HTTP {response.status_code}"
                if unsafe:
                    raise Uncertain(f"{method} {url}: {problem}")
                attempt += 1
                self.sleep(self.settings.backoff_seconds * 2**attempt, f"{method} {url}: backing off after {problem}")
                continue
            return response
        raise ActionsError(f"{method} {url}: {problem} (after {attempt} attempts)")

    def _request(self, method: str, url: str, max_bytes: int | None, **kwargs: Any) -> httpx.Response:
        timeout = self.settings.timeout_seconds
        headers = {**self.headers(), **kwargs.pop("headers", {})}  # e.g. If-None-Match of a conditional listing
        if max_bytes is None:
            return self.client.request(method, url, headers=headers, timeout=timeout, **kwargs)
        with self.client.stream(method, url, headers=headers, timeout=timeout, **kwargs) as response:
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise TooLarge(f"{method} {url}: the answer declares {int(declared):,} bytes, over {max_bytes:,}")
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise TooLarge(f"{method} {url}: the answer is larger than {max_bytes:,} bytes")
                chunks.append(chunk)
        # The body as read (bounded), on a response that no longer needs its stream.
        return httpx.Response(
            response.status_code, headers=response.headers, content=b"".join(chunks), request=response.request
        )

    def _pause(self, seconds: float) -> None:
        seconds = min(max(seconds, 1.0), MAX_RATE_WAIT)
        self.rate_waits.append(seconds)
        log.warning("GitHub rate limit: waiting %.0f s", seconds)
        self.sleep(seconds, "GitHub rate limit")


def _rate_limit_wait(response: httpx.Response) -> float | None:
    """Seconds to wait before asking again, when the answer is a rate limit; None otherwise."""
    if response.status_code not in (403, 429):
        return None
    retry_after = response.headers.get("retry-after")
    if retry_after is not None:
        try:
            return float(retry_after)
        except ValueError:
            return SECONDARY_WAIT
    if response.headers.get("x-ratelimit-remaining") == "0":
        reset = response.headers.get("x-ratelimit-reset")
        return float(reset) - time.time() if reset else SECONDARY_WAIT
    if response.status_code == 429 or "secondary rate limit" in response.text.lower():
        return SECONDARY_WAIT
    return None


def message(response: httpx.Response) -> str:
    try:
        answer = untrusted.answer_json(response.content, str(response.request.url), expect=dict)
        return str(answer.get("message", "")).strip()
    except (ValueError, RuntimeError):  # not JSON (or a response made without a request)
        return response.text[:200].strip()
