"""Soak benchmark: many poll cycles of the real service code in one process; RSS must stay flat.

    .venv/bin/python bench/bench_soak.py [--cycles 1000] [--json] [--quick]

Each cycle is what the service's poll job does: `poll_all` over the 20 sources of bench_poll.py
against the local fake registry (state in SQLite, conditional requests), then an outbox delivery
to the local Slack fake through the real slack-sdk. Every 50th cycle a new pre-release appears on
PyPI, so events, notices and Slack posts happen too. Printed: RSS at start (after a warm-up of 20
cycles) and at the end, the change in %, and per-cycle wall time (median, p95, max). Goal: RSS
flat within ±10 %. Exit status 1 if the goal is missed or a cycle failed.
--quick: 30 cycles (the smoke test's mode; too few to judge the RSS goal, which is then only printed).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from bench.bench_poll import SOURCES  # noqa: E402
from bench.fakes.registry_server import FIXTURES, serve_registry  # noqa: E402
from bench.fakes.slack_server import FakeSlack  # noqa: E402
from watcher.config import LoadedConfig, parse_config  # noqa: E402
from watcher.core.store import Store  # noqa: E402
from watcher.notify.delivery import WebApiSink, deliver_outbox  # noqa: E402
from watcher.polling.poll import poll_all  # noqa: E402

WARM_UP = 20


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def add_prerelease(page: Path, number: int) -> None:
    """Append a made-up pre-release (2.99.0aN) to the Simple JSON page of mcp."""
    data = json.loads(page.read_text())
    version = f"2.99.0a{number}"
    data["versions"].append(version)
    data["files"].append(
        {
            "filename": f"mcp-{version}-py3-none-any.whl",
            "url": "{{BASE}}/pypi-files/mcp-" + version + "-py3-none-any.whl",
            "hashes": {"sha256": "0" * 64},
            "upload-time": "2026-11-29T10:00:00.000000Z",
            "yanked": False,
            "size": 1,
        }
    )
    page.write_text(json.dumps(data))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="30 cycles: a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.cycles = 30

    work = Path(tempfile.mkdtemp(prefix="mcp-watcher-soak-"))
    root = work / "registry"
    shutil.copytree(FIXTURES, root)
    page = root / "pypi" / "simple" / "mcp" / "index.json"
    times: list[float] = []
    failures = 0
    with serve_registry(root) as registry, FakeSlack(token="xoxb-soak", channels=["#books-mcp"]) as slack:
        sdks = "\n".join(
            f"  - {{name: s{i}, registry: {reg}, package: '{pkg}', url: '{registry.url(folder)}'}}"
            for i, (reg, pkg, folder) in enumerate(SOURCES)
        )
        text = (
            f"state: {work / 'watcher.db'}\nsdks:\n{sdks}\n"
            "teams:\n  - {name: books, slack_channel: '#books-mcp', sdks: [s0]}\n"
            f"slack: {{api_url: '{slack.api_url}', retries: 0}}\n"
        )
        config = parse_config(text, "soak.yaml")
        loaded = LoadedConfig(config, work / "soak.yaml", work)
        store = Store(work / "watcher.db")
        sink = WebApiSink(slack.token, config.slack, store)
        start_rss = 0
        for cycle in range(WARM_UP + args.cycles):
            if cycle == WARM_UP:
                gc.collect()
                start_rss = rss_kib()
            if cycle and cycle % 50 == 0:
                add_prerelease(page, cycle // 50)
            began = time.perf_counter()
            result = asyncio.run(poll_all(loaded, store))
            deliver_outbox(store, sink)
            if cycle >= WARM_UP:
                times.append(time.perf_counter() - began)
            failures += len(result.failed)
        gc.collect()
        end_rss = rss_kib()
        messages = len(slack.messages)
        requests = registry.stats.requests
        store.close()
    shutil.rmtree(work, ignore_errors=True)

    change = (end_rss - start_rss) / start_rss * 100
    ordered = sorted(times)
    figures = {
        "cycles": args.cycles,
        "sources": len(SOURCES),
        "rss_start_kib": start_rss,
        "rss_end_kib": end_rss,
        "rss_change_percent": round(change, 2),
        "cycle_median_ms": round(statistics.median(times) * 1000, 1),
        "cycle_p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 1),
        "cycle_max_ms": round(ordered[-1] * 1000, 1),
        "failed_polls": failures,
        "slack_messages": messages,
        "registry_requests": requests,
    }
    ok = abs(change) <= 10 and failures == 0
    if args.json:
        print(json.dumps({**figures, "goal_met": ok}, indent=2))
    else:
        print(f"{args.cycles} poll cycles of {len(SOURCES)} sources (+ outbox delivery) in one process")
        print(f"RSS start {start_rss / 1024:.1f} MiB, end {end_rss / 1024:.1f} MiB: {change:+.2f} % (goal ±10 %)")
        print(
            f"per cycle: median {figures['cycle_median_ms']} ms, p95 {figures['cycle_p95_ms']} ms, "
            f"max {figures['cycle_max_ms']} ms"
        )
        print(f"failed polls {failures}, Slack messages {messages}, registry requests {requests}")
        print("goal met" if ok else "GOAL MISSED")
    if args.quick:  # a few cycles measure nothing to judge: only a failed cycle fails
        return 0 if failures == 0 else 1
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
