"""Where a run's time goes: detection, queue, environment build, suite — per run and as /metrics histograms.

- detection: the registry's publication time → the poll that first saw the version (None when the
  registry gives no time, or for a baseline run: history is not news);
- queue: queued → a worker took the run;
- build: getting the environment (waiting for a pre-build included; ~0 when it was ready);
- suite: the rest of the run (server start, conformance, contract).

Stored times have whole-second precision, so detection and queue are exact to about a second.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from prometheus_client.core import HistogramMetricFamily
from prometheus_client.registry import Collector

from watcher.core.run_report import RunReport, Timings
from watcher.core.store import Store
from watcher.core.store_schema import RunRow
from watcher.core.timefmt import parse_iso
from watcher.notify import keys

PARTS = ("detection", "queue", "build", "suite")
BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, float("inf"))
RUNS_READ = 1000
"""The newest finished runs the histograms are computed from at each scrape."""


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return round(max(0.0, (end - start).total_seconds()), 2)


def run_timings(store: Store, run: RunRow, report: RunReport, started: datetime) -> Timings:
    """The four parts of one run, in seconds; `started` is when the worker took the run."""
    detection = None
    if not keys.is_baseline_trigger(run.get("trigger")):
        with store.transaction():  # one connection shared by the run threads: read under the store's lock
            rows = store.versions_of(run["sdk"])
        row = next((v for v in rows if v["version"] == run["sdk_version"]), None)
        if row is not None:
            detection = _seconds(parse_iso(row["published"]), parse_iso(row["first_seen"]))
    install = report.get("install") or {}
    build = round(float(install.get("seconds") or 0.0), 2) if install else None
    total = report.get("seconds")
    suite = round(max(0.0, float(total) - (build or 0.0)), 2) if total is not None else None
    return {
        "detection_seconds": detection,
        "queue_seconds": _seconds(parse_iso(run.get("queued")), started),
        "build_seconds": build,
        "suite_seconds": suite,
        "prebuilt": bool(install.get("prebuilt")),
    }


def _part_seconds(timings: Timings | None, part: str) -> float | None:
    """One part's seconds out of a stored report's timings (None: not measured, or no timings)."""
    if not timings:
        return None
    by_part = {
        "detection": timings.get("detection_seconds"),
        "queue": timings.get("queue_seconds"),
        "build": timings.get("build_seconds"),
        "suite": timings.get("suite_seconds"),
    }
    return by_part.get(part)


class RunTimingsCollector(Collector):
    """Histograms of the parts, read from the stored run reports at scrape time (so they survive restarts)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[HistogramMetricFamily]:
        values: dict[str, list[float]] = {part: [] for part in PARTS}
        for run in self.store.runs(status="done", limit=RUNS_READ):
            timings = (run.get("report") or {}).get("timings")
            for part in PARTS:
                value = _part_seconds(timings, part)
                if isinstance(value, int | float):
                    values[part].append(float(value))
        for part in PARTS:
            family = HistogramMetricFamily(
                f"mcp_watcher_run_{part}_seconds", f"Suite runs: {part} time in seconds (newest {RUNS_READ} runs)"
            )
            observed = values[part]
            buckets = [(_label(bound), float(sum(1 for v in observed if v <= bound))) for bound in BUCKETS]
            family.add_metric([], buckets, sum_value=sum(observed))
            yield family


def _label(bound: float) -> str:
    return "+Inf" if bound == float("inf") else f"{bound:g}"
