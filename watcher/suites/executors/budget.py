"""GitHub's primary budget as this process sees it (5,000 requests an hour for a token): what the last
answer's `x-ratelimit-*` headers said, what was spent (a 304 is not), and rate limits met. /metrics shows it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector


@dataclass
class Budget:
    """The primary limit as GitHub last reported it, and what this process spent of it."""

    limit: int | None = None
    remaining: int | None = None
    reset: float | None = None
    counted: int = 0
    """Answers that count against the primary limit (everything but a 304)."""
    not_modified: int = 0
    limited: int = 0
    """Answers that were a rate limit (403/429 with the limit's headers or words)."""

    def observe(self, response: httpx.Response) -> None:
        if response.status_code == 304:
            self.not_modified += 1
        else:
            self.counted += 1
        headers = response.headers
        if headers.get("x-ratelimit-limit", "").isdigit():
            self.limit = int(headers["x-ratelimit-limit"])
        if headers.get("x-ratelimit-remaining", "").isdigit():
            self.remaining = int(headers["x-ratelimit-remaining"])
        if headers.get("x-ratelimit-reset", "").isdigit():
            self.reset = float(headers["x-ratelimit-reset"])


BUDGET = Budget()
"""The process's GitHub budget as /metrics shows it (every Actions call observes into it)."""


class BudgetCollector(Collector):
    """mcp_watcher_github_*: the primary budget GitHub last reported and what the watcher spent."""

    def collect(self) -> Iterator[Metric]:
        remaining = GaugeMetricFamily("mcp_watcher_github_ratelimit_remaining", "Primary limit left (last answer)")
        limit = GaugeMetricFamily("mcp_watcher_github_ratelimit_limit", "Primary limit per hour (last answer)")
        reset = GaugeMetricFamily("mcp_watcher_github_ratelimit_reset_timestamp_seconds", "When the limit resets")
        for family, value in ((remaining, BUDGET.remaining), (limit, BUDGET.limit), (reset, BUDGET.reset)):
            if value is not None:
                family.add_metric([], float(value))
            yield family
        requests = CounterMetricFamily(
            "mcp_watcher_github_requests",
            "GitHub API answers by whether the primary limit counts them",
            labels=["counted"],
        )
        requests.add_metric(["yes"], BUDGET.counted)
        requests.add_metric(["no"], BUDGET.not_modified)
        yield requests
        limited = CounterMetricFamily("mcp_watcher_github_rate_limited", "GitHub answers that were a rate limit")
        limited.add_metric([], BUDGET.limited)
        yield limited
