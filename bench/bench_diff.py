"""Benchmark: diff two generated 1,000-tool snapshots with nested schemas. Goal: < 1 s.

    .venv/bin/python bench/bench_diff.py [--tools 1000] [--runs 5] [--quick]

Prints the best and median wall time of `diff_snapshots` (loading both folders included) for a
single-era pair and for a both-era pair (each era holds the same 1,000 tools).
--quick: 100 tools, one run (the smoke test's mode).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.contracts import make_tool, mutate, write  # noqa: E402
from watcher.contract.diff import diff_snapshots  # noqa: E402


def measure(base: Path, cand: Path, runs: int) -> tuple[list[float], int]:
    times = []
    changes = 0
    for _ in range(runs):
        start = time.perf_counter()
        report = diff_snapshots(base, cand)
        times.append(time.perf_counter() - start)
        changes = len(report["changes"])
    return times, changes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="100 tools, one run: a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.tools, args.runs = 100, 1
    rng = random.Random(4)
    tools = [make_tool(i, rng) for i in range(args.tools)]
    changed = mutate(tools, rng)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        single = measure(write(root / "a", tools), write(root / "b", changed), args.runs)
        both = measure(
            write(root / "c", tools, ("legacy", "modern")), write(root / "d", changed, ("legacy", "modern")), args.runs
        )
    for label, (times, changes) in (("single-era", single), ("both-era", both)):
        print(
            f"diff {args.tools} vs {len(changed)} tools ({label}): best {min(times):.3f} s, "
            f"median {statistics.median(times):.3f} s, {changes} changes, goal < 1 s: "
            f"{'met' if min(times) < 1 else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
