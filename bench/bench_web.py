"""Benchmark: the status page `/`, `/api/status` and `/?team=NAME` at 100 and 1,000 servers × 20 SDK versions.

    .venv/bin/python bench/bench_web.py [--sizes 100,1000] [--versions 20] [--runs 15] [--quick]

Goals (issue 24): 100 servers: `/` and `/api/status` ≤ 50 ms median; 1,000 servers: `/` ≤ 300 ms,
`/api/status` ≤ 200 ms, `/?team=NAME` ≤ 50 ms.

Fills a fresh state with one finished run per server and version (verdicts mixed, triggers mixed, each with
a report of realistic size), a poll per source and some outbox rows, then times full HTTP requests through
the service's app (Starlette's test client: routing, middleware, data collection, rendering, streaming) and
prints the median and the worst of N (wall), the median CPU time, the size, and each median's ratio to two
baselines measured in the same run: `/healthz` through the same client (a request that does no work) and
a bare SQLite read of every run's cell columns (the data the matrix is made of, with nothing on top).

`--quick` (one small state, 3 requests each) is what the smoke test runs: it starts, measures, prints.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from starlette.testclient import TestClient  # noqa: E402

from watcher.config import load_config  # noqa: E402
from watcher.core.store import Store
from watcher.core.store_schema import Notice  # noqa: E402
from watcher.core.timefmt import iso
from watcher.ops.health import Readiness, build_app  # noqa: E402
from watcher.web.access import Access  # noqa: E402
from watcher.web.app import web_parts  # noqa: E402
from watcher.web.context import WebContext  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
VERDICTS = ("pass", "pass", "pass", "fail", "error")
TRIGGERS = ("release:python:{v}", "release:python:{v}", "baseline:python:{v}", "cli")
TEAMS = 10
REPORT_PADDING = "x" * 4000
"""A stored report is kilobytes of conformance and contract detail; the matrix must never read it."""


def fill(folder: Path, servers: int, versions: int) -> tuple[Store, Path]:
    teams = [{"name": f"team-{t:02d}", "slack_channel": f"#team-{t:02d}"} for t in range(TEAMS)]
    config = {
        "state": str(folder / "state.db"),
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
        "teams": teams,
        "servers": [
            {
                "name": f"server-{i:04d}",
                "team": f"team-{i % TEAMS:02d}",
                "sdk": "python",
                "language": "python",
                "path": "examples/library",
                "start": ["python", "-m", "library_server", "--port", "{port}"],
                "baseline_sdk_version": "2.3.0",
            }
            for i in range(servers)
        ],
    }
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    store = Store(folder / "state.db")
    names = ["2.3.0"] + [f"2.4.0b{n}" for n in range(1, versions)]
    with store.transaction() as db:
        db["versions"].insert_all(
            {
                "sdk": "python",
                "registry": "pypi",
                "package": "mcp",
                "version": v,
                "prerelease": int(v != "2.3.0"),
                "yanked": 0,
                "published": iso(NOW),
                "first_seen": iso(NOW),
                "baseline": int(v == "2.3.0"),
            }
            for v in names
        )
        rows = []
        for i in range(servers):
            for j, version in enumerate(names):
                verdict = VERDICTS[(i + j) % len(VERDICTS)]
                report = {"server": f"server-{i:04d}", "verdict": verdict, "reasons": [], "detail": REPORT_PADDING}
                moment = iso(NOW - timedelta(minutes=(i + j) % 60))
                rows.append(
                    {
                        "key": f"server-{i:04d}@{version}",
                        "server": f"server-{i:04d}",
                        "sdk": "python",
                        "sdk_version": version,
                        "trigger": TRIGGERS[(i * 7 + j) % len(TRIGGERS)].format(v=version),
                        "status": "done",
                        "verdict": verdict,
                        "report": json.dumps(report),
                        "queued": moment,
                        "started": moment,
                        "finished": moment,
                        "seconds": 9.5,
                    }
                )
        db["runs"].insert_all(rows, batch_size=500)
        db["polls"].insert({"source": "python", "kind": "sdk", "started": iso(NOW), "finished": iso(NOW), "ok": 1})
    for n in range(20):
        store.enqueue(Notice(f"bench:{n}", "team-00", "#team-00", "run", "text", []))
    return store, path


def timed(call: Callable[[], int], runs: int) -> tuple[float, float, int, float]:
    """(median wall seconds, worst wall seconds, size, median CPU seconds of this process: every thread, so the
    test client's server side too; on a shared machine the CPU figure is the steadier one)."""
    seconds, cpu = [], []
    size = 0
    for _ in range(runs):
        began, began_cpu = time.perf_counter(), time.process_time()
        size = call()
        seconds.append(time.perf_counter() - began)
        cpu.append(time.process_time() - began_cpu)
    return statistics.median(seconds), max(seconds), size, statistics.median(cpu)


def getter(client: TestClient, path: str) -> Callable[[], int]:
    def get() -> int:
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        return len(response.content)

    return get


def bare_read(db: Path) -> Callable[[], int]:
    """Every run's cell columns straight from SQLite, on a connection of its own: the floor under the matrix."""
    conn = sqlite3.connect(db)

    def read() -> int:
        return len(conn.execute("select server, sdk_version, id, status, verdict, finished from runs").fetchall())

    return read


def measure(servers: int, versions: int, runs: int) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory() as tmp:
        store, config = fill(Path(tmp), servers, versions)
        loaded = load_config(config, base_dir=ROOT)
        ctx = WebContext(loaded, store, now=lambda: NOW)
        app = build_app(Readiness(store, 30, NOW, lambda: True), *web_parts(ctx, Access(None, False)))
        client = TestClient(app)
        client.get("/")  # templates compiled once, as in a running service
        healthz, _, _, _ = timed(getter(client, "/healthz"), runs)
        sql, _, _, _ = timed(bare_read(Path(tmp) / "state.db"), runs)
        results = []
        for path in ("/", "/api/status", "/?team=team-07"):
            median, worst, size, cpu = timed(getter(client, path), runs)
            results.append(
                {
                    "servers": servers,
                    "versions": versions,
                    "path": path,
                    "median_ms": median * 1000,
                    "worst_ms": worst * 1000,
                    "cpu_ms": cpu * 1000,
                    "bytes": size,
                    "x_healthz": median / healthz,
                    "x_sql": median / sql,
                    "healthz_ms": healthz * 1000,
                    "sql_ms": sql * 1000,
                }
            )
        client.close()
        store.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="100,1000", help="server counts, comma-separated")
    parser.add_argument("--versions", type=int, default=20)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="one small state, 3 requests each (the smoke test)")
    args = parser.parse_args(argv)
    sizes = [20] if args.quick else [int(s) for s in args.sizes.split(",")]
    versions = 5 if args.quick else args.versions
    runs = 3 if args.quick else args.runs
    print(
        f"{'servers × versions':>18}  {'request':16} {'median':>9} {'worst':>9} {'CPU':>9} {'size':>11}  "
        "median's ratio to baselines"
    )
    for servers in sizes:
        for r in measure(servers, versions, runs):
            print(
                f"{servers:>8} × {versions:<7}  {r['path']!s:16} {r['median_ms']:7.1f}ms {r['worst_ms']:7.1f}ms "
                f"{r['cpu_ms']:7.1f}ms "
                f"{r['bytes']:>10,}B  {r['x_healthz']:5.1f}× /healthz ({r['healthz_ms']:.1f} ms), "
                f"{r['x_sql']:5.1f}× bare SQLite read ({r['sql_ms']:.1f} ms)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
