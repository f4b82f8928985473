"""Benchmark: `mcp-watcher diff` of large contracts, beside the standard library reading the same files.

    .venv/bin/python bench/bench_large_diff.py [--sizes 1000,10000,100000] [--runs 3] [--quick]

Generated snapshots (bench/contracts.py: nested schemas, ~10 % of the tools changed). For each size, one
era and (up to 10,000 tools) both eras, in the same run: the CLI's wall time and peak RSS (a child process
each, `--format json` to /dev/null), and the baseline — `json.load` of every file of the same two folders by
a bare interpreter. Goals: 10,000 tools × both eras ≤ 2 s and ≤ 1.5× the baseline; peak RSS ≤ 3× the
input's bytes on disk; the time per tool flat from 1,000 to 100,000 tools (linear growth).
--quick: 300 and 1,000 tools, one run each (the smoke test's mode).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.contracts import folder_bytes, snapshot_pair  # noqa: E402
from bench.measure import mb, mcp_watcher, median_of, python_code, ratio  # noqa: E402

JSON_LOAD = (
    "import json, pathlib, sys\n"
    "files = [p for d in sys.argv[1:] for p in sorted(pathlib.Path(d).rglob('*.json'))]\n"
    "kept = [json.load(open(p, encoding='utf-8')) for p in files]"
)
BOTH_ERAS_UP_TO = 10_000
WALL_GOAL, RATIO_GOAL, RSS_GOAL = 2.0, 1.5, 3.0


def case(root: Path, tools: int, eras: tuple[str, ...] | None, runs: int) -> dict[str, float]:
    base, cand = snapshot_pair(root, tools, eras)
    size = folder_bytes(base, cand)
    diff = median_of(runs, mcp_watcher("diff", str(base), str(cand), "--format", "json", "--fail-on", "none"))
    load = median_of(runs, python_code(JSON_LOAD, str(base), str(cand)))
    return {
        "tools": tools,
        "bytes": size,
        "diff": diff.seconds,
        "rss": diff.peak_rss,
        "load": load.seconds,
        "load_rss": load.peak_rss,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="tool counts, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is shown)")
    parser.add_argument("--quick", action="store_true", help="300 and 1,000 tools, one run: a smoke test")
    args = parser.parse_args()
    sizes = [300, 1000] if args.quick else [int(n) for n in args.sizes.split(",")]
    runs = 1 if args.quick else args.runs
    rows: list[tuple[str, dict[str, float]]] = []
    for tools in sizes:
        for eras in (None, ("legacy", "modern")) if tools <= BOTH_ERAS_UP_TO else (None,):
            label = "both eras" if eras else "one era"
            with tempfile.TemporaryDirectory(prefix="bench-large-diff-") as tmp:
                row = case(Path(tmp), tools, eras, runs)
            rows.append((label, row))
            print(
                f"{tools:>7,} tools, {label:9}: input {mb(row['bytes']):>10}; diff CLI {row['diff']:6.2f} s, "
                f"json.load {row['load']:6.2f} s ({ratio(row['diff'], row['load'])}); peak RSS {mb(row['rss'])} "
                f"({ratio(row['rss'], row['bytes'])} the input; json.load {mb(row['load_rss'])}); "
                f"{row['diff'] / tools * 1e6:.0f} µs per tool",
                flush=True,
            )
    for label, row in rows:
        if row["tools"] == BOTH_ERAS_UP_TO and label == "both eras":
            met = row["diff"] <= WALL_GOAL and row["diff"] / row["load"] <= RATIO_GOAL
            print(f"goal 10,000 tools × both eras ≤ {WALL_GOAL} s and ≤ {RATIO_GOAL}× json.load: {_met(met)}")
    large = [row for _, row in rows if row["tools"] >= BOTH_ERAS_UP_TO] or [row for _, row in rows]
    worst = max(row["rss"] / row["bytes"] for row in large)
    # Below 10,000 tools the interpreter's own ~20 MB dominates; the goal is about large contracts.
    print(
        f"goal peak RSS ≤ {RSS_GOAL}× the input (from {large[0]['tools']:,} tools): worst {worst:.2f}×: "
        f"{_met(worst <= RSS_GOAL)}"
    )
    one_era = [row for label, row in rows if label == "one era"]
    if len(one_era) > 1:
        per_tool = [row["diff"] / row["tools"] for row in one_era]
        print(
            f"one era, time per tool from {one_era[0]['tools']:,} to {one_era[-1]['tools']:,} tools: "
            + " → ".join(f"{p * 1e6:.0f} µs" for p in per_tool)
            + f" ({ratio(per_tool[-1], per_tool[0])} the smallest's)"
        )
    return 0


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


if __name__ == "__main__":
    raise SystemExit(main())
