"""The local executor's pool: N servers x one SDK version, at `suites.concurrency` 1, 2 and 4.

    .venv/bin/python bench/bench_concurrency.py [--servers 4] [--sdk-version 2.3.0] [--levels 1,2,4]

The servers are copies of the Python example under different names (each has its own environment).
A first pass at the highest level builds every environment and the conformance tool (its time is
shown, not compared); then each level drains the same queue again with warm environments. Figures per
level: wall time, the sum of the runs' own times, the sum of the conformance suite's own time, and
the speed-up over concurrency 1.
--quick (the smoke test's mode; installs nothing): starting the example server once, then two at a time
(threads, as the pool would), from this environment: the wall times and the speed-up.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from watcher.config import load_config  # noqa: E402
from watcher.core.store import Store  # noqa: E402
from watcher.suites.worker import process_queue, queue_for_release  # noqa: E402

LIBRARY = ROOT / "examples" / "library"


def write_config(folder: Path, servers: int, concurrency: int) -> Path:
    data = {
        "state": str(folder / "unused.db"),
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
        "teams": [{"name": "books", "slack_channel": "#books"}],
        "servers": [
            {
                "name": f"library-{i}",
                "team": "books",
                "sdk": "python",
                "language": "python",
                "path": str(LIBRARY),
                "start": ["python", "-m", "library_server", "--port", "{port}"],
                "baseline_sdk_version": "2.3.0",
                "baseline_snapshot": str(LIBRARY / "baseline-snapshot"),
                "expected_failures": str(LIBRARY / "conformance-baseline.yml"),
                "requirements": ["2026-07-28", "2025-11-25"],
            }
            for i in range(servers)
        ],
        "suites": {"concurrency": concurrency, "runs_dir": str(folder / "runs"), "envs_dir": str(folder / "envs")},
    }
    path = folder / f"watcher-{concurrency}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def drain(folder: Path, servers: int, concurrency: int, version: str, label: str) -> dict[str, float]:
    loaded = load_config(write_config(folder, servers, concurrency))
    store = Store(folder / f"{label}.db")
    queue_for_release(loaded, store, "python", version, prerelease=True)
    began = time.monotonic()
    outcomes = process_queue(loaded, store)
    wall = time.monotonic() - began
    verdicts = sorted({o["verdict"] for o in outcomes})
    suite = sum(float(c.get("seconds") or 0) for o in outcomes for c in o["report"].get("conformance") or [])
    runs = sum(float(o["seconds"]) for o in outcomes)
    return {"wall": wall, "runs": runs, "suite": suite, "count": len(outcomes), "verdicts": ",".join(verdicts)}


def quick() -> int:
    from concurrent.futures import ThreadPoolExecutor

    from bench.bench_suite import start_seconds

    with tempfile.TemporaryDirectory(prefix="bench-concurrency-quick-") as tmp:
        began = time.monotonic()
        start_seconds(Path(tmp))
        one = time.monotonic() - began
        began = time.monotonic()
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(start_seconds, [Path(tmp)] * 2))
        two = time.monotonic() - began
    speed_up = 2 * one / two
    print(f"example server starts: 1 alone {one:.2f} s wall; 2 at a time {two:.2f} s wall (speed-up {speed_up:.2f} x)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--sdk-version", default="2.3.0")
    parser.add_argument("--levels", default="1,2,4")
    parser.add_argument("--quick", action="store_true", help="server starts only, nothing installed")
    args = parser.parse_args()
    if args.quick:
        return quick()
    levels = [int(x) for x in args.levels.split(",")]
    with tempfile.TemporaryDirectory(prefix="mcp-watcher-bench-") as tmp:
        folder = Path(tmp)
        warmup = drain(folder, args.servers, max(levels), args.sdk_version, "warmup")
        print(
            f"warm-up (builds {args.servers} environments): {warmup['wall']:.1f} s wall, verdicts {warmup['verdicts']}"
        )
        print(f"{'concurrency':>11} {'wall s':>8} {'runs s':>8} {'suite s':>8} {'suite/wall':>10} {'speed-up':>8}")
        base = None
        for level in levels:
            figures = drain(folder, args.servers, level, args.sdk_version, f"c{level}")
            base = base or figures["wall"]
            print(
                f"{level:>11} {figures['wall']:>8.1f} {figures['runs']:>8.1f} {figures['suite']:>8.1f} "
                f"{figures['suite'] / figures['wall']:>10.2f} {base / figures['wall']:>8.2f}"
                f"   ({int(figures['count'])} runs, {figures['verdicts']})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
