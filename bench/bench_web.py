"""Benchmark: render `/` and `/api/status` over a state of 100 servers × 20 SDK versions. Goal: < 1 s each.

    .venv/bin/python bench/bench_web.py [--servers 100] [--versions 20] [--runs 15] [--quick]

Fills a fresh state with one finished run per server and version (verdicts mixed, each with a small
report), a poll per source and some outbox rows, then times full HTTP requests through the service's app
(Starlette's test client: routing, middleware, data collection, template rendering) and prints the median
and the worst of N, plus the page sizes. --quick: 10 servers × 5 versions, 3 runs (the smoke test's mode).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from starlette.testclient import TestClient  # noqa: E402

from watcher.config import load_config  # noqa: E402
from watcher.health import Readiness, build_app  # noqa: E402
from watcher.store import Notice, Store, iso  # noqa: E402
from watcher.web.access import Access  # noqa: E402
from watcher.web.app import web_parts  # noqa: E402
from watcher.web.context import WebContext  # noqa: E402

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
VERDICTS = ("pass", "pass", "pass", "fail", "error")


def fill(folder: Path, servers: int, versions: int) -> tuple[Store, Path]:
    teams = [{"name": f"team-{t:02d}", "slack_channel": f"#team-{t:02d}"} for t in range(10)]
    config = {
        "state": str(folder / "state.db"),
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
        "teams": teams,
        "servers": [
            {
                "name": f"server-{i:03d}",
                "team": f"team-{i % 10:02d}",
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
                report = {"server": f"server-{i:03d}", "verdict": verdict, "reasons": [], "conformance": []}
                rows.append(
                    {
                        "key": f"server-{i:03d}@{version}",
                        "server": f"server-{i:03d}",
                        "sdk": "python",
                        "sdk_version": version,
                        "trigger": "release",
                        "status": "done",
                        "verdict": verdict,
                        "report": json.dumps(report),
                        "queued": iso(NOW),
                        "started": iso(NOW),
                        "finished": iso(NOW),
                        "seconds": 9.5,
                    }
                )
        db["runs"].insert_all(rows)
        db["polls"].insert({"source": "python", "kind": "sdk", "started": iso(NOW), "finished": iso(NOW), "ok": 1})
    for n in range(20):
        store.enqueue(Notice(f"bench:{n}", "team-00", "#team-00", "run", "text", []))
    return store, path


def timed(client: TestClient, path: str, runs: int) -> tuple[float, float, int]:
    seconds = []
    size = 0
    for _ in range(runs):
        began = time.perf_counter()
        response = client.get(path)
        seconds.append(time.perf_counter() - began)
        assert response.status_code == 200, (path, response.status_code)
        size = len(response.content)
    return statistics.median(seconds), max(seconds), size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=100)
    parser.add_argument("--versions", type=int, default=20)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="10 servers × 5 versions, 3 runs: a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.servers, args.versions, args.runs = 10, 5, 3
    with tempfile.TemporaryDirectory() as tmp:
        store, config = fill(Path(tmp), args.servers, args.versions)
        loaded = load_config(config, base_dir=Path(__file__).resolve().parents[1])
        ctx = WebContext(loaded, store, now=lambda: NOW)
        app = build_app(Readiness(store, 30, NOW, lambda: True), *web_parts(ctx, Access(None, False)))
        client = TestClient(app)
        client.get("/")  # templates compiled once, as in a running service
        print(f"state: {args.servers} servers × {args.versions} versions = {args.servers * args.versions} runs")
        for path in ("/", "/api/status"):
            median, worst, size = timed(client, path, args.runs)
            print(f"{path:12} median {median * 1000:7.1f} ms   worst {worst * 1000:7.1f} ms   {size:,} bytes")
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
