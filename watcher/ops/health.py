"""The service's HTTP face: /healthz, /readyz and /metrics (Prometheus), one small Starlette app."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import uvicorn
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from watcher.core.store import Store
from watcher.core.timefmt import utcnow
from watcher.notify.delivery import SLACK_ERRORS
from watcher.notify.destination import Destination
from watcher.suites.timings import RunTimingsCollector

log = logging.getLogger(__name__)


@dataclass
class Readiness:
    store: Store
    poll_minutes: float
    started: datetime
    scheduler_running: Callable[[], bool]
    destination: Destination | None = None
    """Where notices go; a degraded (console) delivery shows in the body and as a metric, not as a 503."""
    boundary: dict[str, Any] | None = None
    """The run boundary's start-up self-check (`sandbox.self_check`); a required one that cannot be had is a 503."""

    def check(self) -> tuple[bool, dict[str, Any]]:
        problems: list[str] = []
        try:
            self.store.set_kv("readyz", {"at": utcnow().isoformat()})
        except Exception as exc:  # any failure to write is "not ready", with the reason
            problems.append(f"state not writable: {exc}")
        if not self.scheduler_running():
            problems.append("scheduler not running")
        last_ok = self.store.last_successful_poll("sdk")
        limit = timedelta(minutes=3 * self.poll_minutes)
        reference = max(filter(None, [last_ok, self.started]))
        if utcnow() - reference > limit:
            problems.append(
                f"no successful poll since {last_ok.isoformat() if last_ok else 'start'} "
                f"(limit {limit.total_seconds() / 60:g} min)"
            )
        detail: dict[str, Any] = {"ready": not problems, "problems": problems, "last_successful_poll": last_ok}
        if self.boundary is not None:
            if not self.boundary["ok"]:
                problems.append(f"run boundary: {self.boundary['text']}")
            detail["sandbox"] = self.boundary
        detail["ready"] = not problems
        if self.destination is not None:
            detail["delivery"] = self.destination.to_json()
        return not problems, detail


class StoreCollector(Collector):
    """Reads the figures from the state database at scrape time, so they survive restarts."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        store = self.store
        polls = CounterMetricFamily("mcp_watcher_polls", "Polls per source and result", labels=["source", "result"])
        for poll_count in store.poll_counts():
            polls.add_metric([poll_count.source, "ok" if poll_count.ok else "failed"], poll_count.polls)
        yield polls
        last = GaugeMetricFamily(
            "mcp_watcher_last_poll_success_timestamp_seconds", "Last successful poll per source", labels=["source"]
        )
        for source, moment in store.last_successful_polls().items():
            last.add_metric([source], moment.timestamp())
        yield last
        new = CounterMetricFamily("mcp_watcher_new_versions", "Versions first seen after the baseline", labels=["sdk"])
        for sdk, count in store.new_version_counts().items():
            new.add_metric([sdk], count)
        yield new
        runs = CounterMetricFamily("mcp_watcher_suite_runs", "Finished suite runs by verdict", labels=["verdict"])
        seconds = CounterMetricFamily(
            "mcp_watcher_suite_run_seconds", "Total seconds of finished suite runs by verdict", labels=["verdict"]
        )
        for figures in store.finished_run_figures():
            runs.add_metric([figures.verdict or "unknown"], figures.runs)
            seconds.add_metric([figures.verdict or "unknown"], figures.seconds)
        yield runs
        yield seconds
        queued = GaugeMetricFamily("mcp_watcher_suite_runs_queued", "Suite runs waiting")
        queued.add_metric([], store.count_runs("queued"))
        yield queued
        backlog = store.outbox_backlog()
        depth = GaugeMetricFamily("mcp_watcher_outbox_depth", "Notices waiting for delivery")
        depth.add_metric([], backlog.pending)
        yield depth
        age = GaugeMetricFamily("mcp_watcher_outbox_oldest_age_seconds", "Age of the oldest undelivered notice")
        oldest = backlog.oldest_pending
        age.add_metric([], (utcnow() - oldest).total_seconds() if oldest else 0.0)
        yield age
        failed = GaugeMetricFamily("mcp_watcher_outbox_failed", "Notices Slack refused for good")
        failed.add_metric([], backlog.failed)
        yield failed


class DestinationCollector(Collector):
    """mcp_watcher_delivery_degraded: 1 while Slack is configured but notices go to the console."""

    def __init__(self, destination: Destination) -> None:
        self.destination = destination

    def collect(self) -> Iterator[Any]:
        gauge = GaugeMetricFamily(
            "mcp_watcher_delivery_degraded", "1 when Slack is configured but notices go to the console", labels=["sink"]
        )
        gauge.add_metric([self.destination.sink], 1.0 if self.destination.degraded else 0.0)
        yield gauge


def build_app(
    readiness: Readiness, pages: Sequence[BaseRoute] = (), middleware: Sequence[Middleware] = ()
) -> Starlette:
    """The probes and /metrics, plus the status pages' routes and their access middleware (watcher.web)."""
    registry = CollectorRegistry()
    registry.register(StoreCollector(readiness.store))
    registry.register(SLACK_ERRORS)
    if readiness.destination is not None:
        registry.register(DestinationCollector(readiness.destination))
    registry.register(RunTimingsCollector(readiness.store))
    from watcher.suites.executors.budget import BudgetCollector

    registry.register(BudgetCollector())

    async def healthz(request: Request) -> Response:
        return JSONResponse({"alive": True})

    async def readyz(request: Request) -> Response:
        ready, detail = readiness.check()
        detail["last_successful_poll"] = str(detail["last_successful_poll"] or "") or None
        return JSONResponse(detail, status_code=200 if ready else 503)

    async def metrics(request: Request) -> Response:
        return Response(generate_latest(registry), media_type="text/plain; version=0.0.4; charset=utf-8")

    return Starlette(
        routes=[Route("/healthz", healthz), Route("/readyz", readyz), Route("/metrics", metrics), *pages],
        middleware=list(middleware),
    )


class HttpServer:
    """uvicorn in a background thread, stopped with the service."""

    def __init__(self, app: Starlette, host: str, port: int) -> None:
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, name="http", daemon=True)

    def start(self, timeout: float = 10.0) -> None:
        """Start serving; raises when the address cannot be bound (the endpoints are part of the service)."""
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise OSError(f"cannot serve /healthz on {self.server.config.host}:{self.server.config.port}")
            time.sleep(0.02)

    @property
    def port(self) -> int | None:
        servers = getattr(self.server, "servers", None) or []
        for server in servers:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        return None

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
