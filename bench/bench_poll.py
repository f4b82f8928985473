"""Benchmark: one poll of 20 sources against the local fake registry, cold and then unchanged.

    .venv/bin/python bench/bench_poll.py [--json] [--quick]

Every source gets its own RegistryHttp with a MemoryHttpCache (as the service keeps one cache per
source); all 20 polls run concurrently over one httpx client. The cold pass fills the caches; the
unchanged pass repeats the poll with nothing changed on the registry. Printed per pass: requests
made, 304 answers, response bytes (bodies
and headers, as RegistryHttp counts them) and wall time; then the reduction and the goals
(unchanged: at most one request per source, at least 95 % fewer bytes). Exit status 1 if a goal
or a poll fails. One poll is already quick: --quick (the smoke test's mode) is the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from bench.fakes.registry_server import FIXTURE_SOURCES, FakeRegistry, serve_registry  # noqa: E402
from watcher.sources import ADAPTERS  # noqa: E402
from watcher.sources.base import MemoryHttpCache, RegistryHttp, Release  # noqa: E402
from watcher.sources.settings import HttpSettings, SdkSource  # noqa: E402

# (registry, package, the fake server's folder standing for the registry root): 20 sources, every registry
SOURCES = [source for source in FIXTURE_SOURCES if source[2] != "pypi/crafted"]


@dataclass
class Pass:
    name: str
    requests: int = 0
    not_modified: int = 0
    bytes: int = 0
    seconds: float = 0.0
    releases: int = 0
    max_requests_per_source: int = 0
    failures: int = 0


async def poll(
    name: str, sources: list[SdkSource], https: list[RegistryHttp]
) -> tuple[Pass, list[list[Release] | BaseException]]:
    before = [(h.stats.requests, h.stats.not_modified, h.stats.bytes) for h in https]
    started = time.perf_counter()
    results = await asyncio.gather(
        *(ADAPTERS[s.registry](h, s) for s, h in zip(sources, https, strict=True)), return_exceptions=True
    )
    result = Pass(name, seconds=time.perf_counter() - started)
    for h, (requests, not_modified, size) in zip(https, before, strict=True):
        made = h.stats.requests - requests
        result.requests += made
        result.not_modified += h.stats.not_modified - not_modified
        result.bytes += h.stats.bytes - size
        result.max_requests_per_source = max(result.max_requests_per_source, made)
    for outcome in results:
        if isinstance(outcome, BaseException):
            result.failures += 1
        else:
            result.releases += len(outcome)
    return result, list(results)


async def bench(registry: FakeRegistry) -> tuple[Pass, Pass, bool]:
    sources = [
        SdkSource(name=f"s{i}", registry=kind, package=package, url=registry.url(folder))
        for i, (kind, package, folder) in enumerate(SOURCES)
    ]
    settings = HttpSettings(timeout_seconds=10, retries=0)
    async with httpx.AsyncClient(trust_env=False, limits=httpx.Limits(max_connections=20)) as client:
        https = [RegistryHttp(client, MemoryHttpCache(), settings) for _ in sources]
        cold, cold_results = await poll("cold", sources, https)
        warm, warm_results = await poll("unchanged", sources, https)
    for source, outcome in zip(sources, cold_results + warm_results, strict=False):
        if isinstance(outcome, BaseException):
            print(f"poll failed: {source.registry} {source.package}: {outcome}", file=sys.stderr)
    same = cold_results == warm_results
    return cold, warm, same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--quick", action="store_true", help="the smoke test's mode (the same one poll)")
    args = parser.parse_args()
    with serve_registry() as registry:
        cold, warm, same = asyncio.run(bench(registry))
    fewer_bytes = 1 - warm.bytes / cold.bytes if cold.bytes else 0.0
    fewer_requests = 1 - warm.requests / cold.requests if cold.requests else 0.0
    goals = {
        "unchanged_at_most_one_request_per_source": warm.max_requests_per_source <= 1,
        "unchanged_at_least_95_percent_fewer_bytes": fewer_bytes >= 0.95,
        "no_failed_polls": cold.failures == warm.failures == 0,
        "same_releases_both_passes": same,
    }
    if args.json:
        print(
            json.dumps(
                {
                    "sources": len(SOURCES),
                    "cold": asdict(cold),
                    "unchanged": asdict(warm),
                    "fewer_bytes": round(fewer_bytes, 4),
                    "fewer_requests": round(fewer_requests, 4),
                    "goals": goals,
                },
                indent=2,
            )
        )
    else:
        print(f"one poll of {len(SOURCES)} sources ({len({s[0] for s in SOURCES})} registries), local fake registry")
        print(f"{'pass':<10} {'requests':>8} {'304s':>5} {'max/src':>7} {'bytes':>9} {'wall ms':>8} {'releases':>8}")
        for p in (cold, warm):
            print(
                f"{p.name:<10} {p.requests:>8} {p.not_modified:>5} {p.max_requests_per_source:>7} "
                f"{p.bytes:>9} {p.seconds * 1000:>8.1f} {p.releases:>8}"
            )
        print(
            f"unchanged vs cold: {fewer_requests:.1%} fewer requests, {fewer_bytes:.2%} fewer bytes, "
            f"{warm.requests / len(SOURCES):.2f} requests per source"
        )
        for goal, met in goals.items():
            print(f"  {'ok  ' if met else 'MISS'} {goal.replace('_', ' ')}")
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
