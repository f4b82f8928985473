"""slack-sdk retry handlers that never repeat a post whose outcome is unknown and never wait long.

``chat.postMessage`` is not idempotent: a 5xx or a timeout may come after Slack stored the message, so
the post gets only the rate-limit handler (a 429 means "not processed"). Reads may retry on anything.
A ``Retry-After`` longer than ``slack.max_retry_after_seconds`` is not waited for: the 429 surfaces and
the notice stays queued for the next delivery pass.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState


def retry_after_seconds(response: HttpResponse | None) -> float | None:
    if response is None:
        return None
    for name, values in response.headers.items():
        if name.lower() == "retry-after" and values:
            try:
                return max(0.0, float(values[0]))
            except ValueError:
                return None
    return None


class CappedRateLimitHandler(RateLimitErrorRetryHandler):
    """Retries a 429 only when Slack asks for a wait no longer than ``max_wait`` seconds."""

    def __init__(self, max_retry_count: int, max_wait: float) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait = max_wait

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if not super()._can_retry(state=state, request=request, response=response, error=error):
            return False
        wait = retry_after_seconds(response)
        return wait is None or wait <= self.max_wait


def read_handlers(retries: int, max_wait: float) -> list[Any]:
    """For lookups and uploads: safe to repeat."""
    return [
        ConnectionErrorRetryHandler(max_retry_count=retries),
        CappedRateLimitHandler(retries, max_wait),
        ServerErrorRetryHandler(max_retry_count=retries),
    ]


def post_handlers(retries: int, max_wait: float) -> list[Any]:
    """For chat.postMessage: only a 429 is known not to have posted."""
    return [CappedRateLimitHandler(retries, max_wait)]
