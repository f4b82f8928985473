"""Benchmark: what taking the contract under two client profiles (typical and none, the default) costs a
snapshot, against one profile (typical), both eras, legacy version probes on; and against the snapshot as
it was before profiles (one profile, the legacy era and then the modern one).

    .venv/bin/python bench/bench_snapshot_profiles.py [--server "CMD"]… [--runs 5] [--quick]

--server defaults to the example library server (examples/library); give a Node server's command line too
(e.g. "node …/server-everything/dist/index.js"). The two ways are measured alternately in the same run
(so that load on the machine falls on all alike). Goal: two profiles ≤ 1.3× one. Prints the median wall
time of each way and the ratios, per server.
--quick (the smoke test's mode): the example server only, one run of each way, no warm-up; the goal is
shown, not judged.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from watcher.contract.handshake import DEFAULT_CLIENT_PROFILES  # noqa: E402
from watcher.contract.snapshot import SnapshotTarget, take_snapshot_sync  # noqa: E402

GOAL = 1.3


def _env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "examples/library"), str(ROOT)]),
    }


def _seconds(command: list[str], profiles: tuple[str, ...]) -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        summary = take_snapshot_sync(
            SnapshotTarget(command=command, env=_env(), cwd=str(ROOT)), Path(out), client_profile_name=profiles
        )
        elapsed = time.perf_counter() - start
    for name, eras in summary["profiles"].items():
        if eras["legacy"]["status"] != "ok":
            raise SystemExit(f"{command}: legacy era under {name} failed: {eras['legacy']['status']}")
    return elapsed


def _sequential_seconds(command: list[str]) -> float:
    """One profile, one era after the other: the work a snapshot did before it took several profiles."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        for era in ("legacy", "modern"):
            target = SnapshotTarget(command=command, env=_env(), cwd=str(ROOT))
            take_snapshot_sync(target, Path(out) / era, era=era, client_profile_name="typical")
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", action="append", help="a stdio MCP server's command line (repeatable)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="the example server, one run, no warm-up: a smoke test")
    args = parser.parse_args()
    servers = args.server or [f"{sys.executable} -m library_server --variant v2"]
    if args.quick:
        servers, args.runs = servers[:1], 1
    print(
        f"| server | one profile (typical) | two profiles ({', '.join(DEFAULT_CLIENT_PROFILES)}) | ratio "
        "| before profiles (eras in turn) | two profiles / before | goal |"
    )
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for line in servers:
        command = shlex.split(line)
        if not args.quick:
            _seconds(command, DEFAULT_CLIENT_PROFILES)  # warm-up: imports, file caches
        one: list[float] = []
        two: list[float] = []
        before: list[float] = []
        for _ in range(args.runs):
            one.append(_seconds(command, ("typical",)))
            two.append(_seconds(command, DEFAULT_CLIENT_PROFILES))
            before.append(_sequential_seconds(command))
        one_s, two_s, before_s = (statistics.median(x) for x in (one, two, before))
        ratio = two_s / one_s
        worst = max(worst, ratio)
        print(
            f"| `{Path(command[-1]).name if len(command) > 1 else command[0]}` | {one_s:.2f} s | {two_s:.2f} s "
            f"| {ratio:.2f} × | {before_s:.2f} s | {two_s / before_s:.2f} × | ≤ {GOAL} × |"
        )
    return 0 if args.quick or worst <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
