"""GitHub REST calls for the github-actions executor, on httpx: retries, and rate limits waited out.

`retry-after` (primary or secondary limit) is obeyed; `x-ratelimit-remaining: 0` waits for
`x-ratelimit-reset`, also before the next call after an answer that spent the quota; a 403/429
naming a secondary rate limit without a header waits a minute. 5xx and transport errors retry
with backoff (`http_client.retries`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from watcher.config import HttpSettings
from watcher.suites.executors.budget import BUDGET

log = logging.getLogger(__name__)

API_VERSION = "2022-11-28"
MAX_RATE_WAIT = 900.0
"""Longest single wait for a rate limit; the run's own timeout still applies."""
SECONDARY_WAIT = 60.0
"""GitHub asks for at least a minute after a secondary rate limit without retry-after."""


class ActionsError(Exception):
    """The run could not be carried out or judged on GitHub Actions; the message is the reason."""


@dataclass
class GitHubApi:
    """GitHub REST calls with retries and rate-limit waits, on the project's HTTP client (httpx)."""

    base: str
    token: str
    client: httpx.Client
    settings: HttpSettings
    wait: Callable[[float], None]
    rate_waits: list[float] = field(default_factory=list)
    _reset_at: float | None = None

    def headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": self.settings.user_agent,
        }

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        url = path if path.startswith("http") else f"{self.base.rstrip('/')}{path}"
        problem, attempt, rate_waits = "", 0, 0
        while attempt <= self.settings.retries:
            if self._reset_at is not None:  # the last answer spent the quota: wait for its reset
                self._pause(self._reset_at - time.time())
                self._reset_at = None
            try:
                response = self.client.request(
                    method, url, headers=self.headers(), timeout=self.settings.timeout_seconds, **kwargs
                )
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}"
                attempt += 1
                self.wait(self.settings.backoff_seconds * 2**attempt)
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
                attempt += 1
                self.wait(self.settings.backoff_seconds * 2**attempt)
                continue
            return response
        raise ActionsError(f"{method} {url}: {problem} (after {attempt} attempts)")

    def _pause(self, seconds: float) -> None:
        seconds = min(max(seconds, 1.0), MAX_RATE_WAIT)
        self.rate_waits.append(seconds)
        log.warning("GitHub rate limit: waiting %.0f s", seconds)
        self.wait(seconds)


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
        return str(response.json().get("message", "")).strip()
    except ValueError:
        return response.text[:200].strip()
