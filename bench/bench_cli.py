"""Benchmark: how long the CLI takes before it does anything, beside a bare interpreter in the same run.

    .venv/bin/python bench/bench_cli.py [--runs 15] [--quick]

Median wall time of N runs each, interleaved (so a busy moment of the machine hits all of them): `python -c
pass`, `mcp-watcher --help`, and `mcp-watcher diff` of two generated 10-tool snapshots (both eras, ~10 % of
the tools changed; bench/contracts.py). `mcp-watcher` is the console script installed beside this
interpreter (else `python -m watcher.cli`). Goals: `--help` ≤ 0.3 s and ≤ 6× `python -c pass`; the diff ≤ 0.5 s
and ≤ 10×. --quick: 3 runs each (the smoke test's mode).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.contracts import snapshot_pair  # noqa: E402
from bench.measure import run  # noqa: E402

GOALS = {"--help": (0.3, 6.0), "diff": (0.5, 10.0)}


def cli() -> list[str]:
    script = Path(sys.executable).with_name("mcp-watcher")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "watcher.cli"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="3 runs each: a smoke test")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        base, cand = snapshot_pair(Path(tmp), 10, ("legacy", "modern"))
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "--help": [*cli(), "--help"],
            "diff": [*cli(), "diff", str(base), str(cand)],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, argv in commands.items():
                times[name].append(run(argv, cwd=Path(tmp)).seconds)
    bare = statistics.median(times["python -c pass"])
    print(f"{runs} runs each, interleaved; mcp-watcher = {' '.join(cli())}")
    print(f"  {'python -c pass':27} median {bare * 1000:6.0f} ms")
    for name, (wall_goal, ratio_goal) in GOALS.items():
        median = statistics.median(times[name])
        ratio = median / bare
        met = median <= wall_goal and ratio <= ratio_goal
        label = "mcp-watcher " + ("--help" if name == "--help" else "diff (10 tools)")
        print(
            f"  {label:27} median {median * 1000:6.0f} ms = {ratio:4.1f}× python -c pass "
            f"(goal ≤ {wall_goal * 1000:.0f} ms and ≤ {ratio_goal:g}×): {'met' if met else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
