"""Pacing under GitHub's secondary limits, and the primary budget as /metrics shows it."""

from __future__ import annotations

import httpx
from prometheus_client import CollectorRegistry, generate_latest

from watcher.suites.executors.budget import Budget, BudgetCollector
from watcher.suites.executors.fanout import Limits, Pacer


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds


def test_dispatches_are_paced_under_the_content_creation_limit():
    clock = FakeClock()
    pacer = Pacer(Limits(creates_per_minute=10, points_per_minute=1000), clock.now, clock.sleep)
    moments = []
    for _ in range(35):
        pacer.acquire("POST")
        moments.append(clock.t)
    for i, t in enumerate(moments):
        in_window = [m for m in moments if t - 60 < m <= t]
        assert len(in_window) <= 10, (i, t)
    assert moments[-1] >= 180  # 35 creates at 10 a minute need three more minutes
    assert moments[:10] == [0.0] * 10  # within the limit nothing waits


def test_points_count_posts_five_times_a_get():
    clock = FakeClock()
    pacer = Pacer(Limits(creates_per_minute=1000, points_per_minute=20), clock.now, clock.sleep)
    for _ in range(4):
        pacer.acquire("POST")  # 20 points: the minute's budget
    assert clock.t == 0.0
    pacer.acquire("GET")
    assert clock.t >= 60.0


def test_a_304_is_not_counted_and_the_budget_reaches_metrics(monkeypatch):
    budget = Budget()
    headers = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4990", "x-ratelimit-reset": "1796000000"}
    budget.observe(httpx.Response(200, headers=headers))
    budget.observe(httpx.Response(304, headers=headers))
    assert (budget.counted, budget.not_modified, budget.remaining, budget.limit) == (1, 1, 4990, 5000)

    import watcher.suites.executors.budget as module

    monkeypatch.setattr(module, "BUDGET", budget)
    registry = CollectorRegistry()
    registry.register(BudgetCollector())
    text = generate_latest(registry).decode()
    assert "mcp_watcher_github_ratelimit_remaining 4990.0" in text
    assert 'mcp_watcher_github_requests_total{counted="yes"} 1.0' in text
    assert 'mcp_watcher_github_requests_total{counted="no"} 1.0' in text
