"""Benchmark: what the legacy version probes cost a snapshot, against today's snapshot and the MCP
Inspector CLI's four list calls (the seeds' way of taking a snapshot, one era only).

    .venv/bin/python bench/bench_snapshot_probes.py --node "node …/server-everything/dist/index.js" \\
        [--python "CMD"] [--inspector PATH/TO/mcp-inspector] [--runs 5]

--python defaults to the example library server (examples/library). Goal: with probes ≤ 1.25× without,
and ≤ 0.5× the Inspector's four calls. Prints the median wall time of each way, per server.
--quick (the smoke test's mode): the Python server only (--node optional), one run each.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from watcher.contract.snapshot import SnapshotTarget, take_snapshot_sync  # noqa: E402

INSPECTOR_METHODS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


def _env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "examples/library"), str(ROOT)]),
    }


def _snapshot_seconds(command: list[str], era: str, probes: bool) -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        summary = take_snapshot_sync(
            SnapshotTarget(command=command, env=_env(), cwd=str(ROOT)),
            Path(out),
            era=era,
            probe_versions=probes,
            client_profile_name="typical",  # one profile: what the probes cost (bench_snapshot_profiles: profiles)
        )
        elapsed = time.perf_counter() - start
    if summary["eras"]["legacy"]["status"] != "ok":
        raise SystemExit(f"{command}: legacy era failed: {summary['eras']['legacy']['status']}")
    return elapsed


def _inspector_seconds(inspector: str, command: list[str]) -> float:
    start = time.perf_counter()
    for method in INSPECTOR_METHODS:
        subprocess.run(
            [inspector, "--cli", *command, "--method", method],
            env={**os.environ, **_env()},
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
            timeout=120,
        )
    return time.perf_counter() - start


def _median(runs: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(runs))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--node", help="a Node stdio MCP server's command line (required without --quick)")
    parser.add_argument("--python", default=f"{sys.executable} -m library_server --variant v2")
    parser.add_argument("--inspector", help="the mcp-inspector executable (npm @modelcontextprotocol/inspector)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="the Python server only, one run: a smoke test")
    args = parser.parse_args()
    if not args.node and not args.quick:
        parser.error("--node is required (without --quick)")
    if args.quick:
        args.runs = 1
    print(
        "| server | legacy, no probes | legacy, probes | ratio | both eras, no probes | both eras, probes | ratio "
        "| Inspector 4 calls | probes (legacy) / Inspector |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, line in (("Node", args.node), ("Python", args.python)):
        if not line:
            continue
        command = shlex.split(line)
        legacy_plain = _median(args.runs, partial(_snapshot_seconds, command, "legacy", False))
        legacy_probes = _median(args.runs, partial(_snapshot_seconds, command, "legacy", True))
        both_plain = _median(args.runs, partial(_snapshot_seconds, command, "both", False))
        both_probes = _median(args.runs, partial(_snapshot_seconds, command, "both", True))
        inspector = _median(args.runs, partial(_inspector_seconds, args.inspector, command)) if args.inspector else None
        cells = [
            label,
            f"{legacy_plain:.2f} s",
            f"{legacy_probes:.2f} s",
            f"{legacy_probes / legacy_plain:.2f}×",
            f"{both_plain:.2f} s",
            f"{both_probes:.2f} s",
            f"{both_probes / both_plain:.2f}×",
            f"{inspector:.2f} s" if inspector else "—",
            f"{legacy_probes / inspector:.2f}×" if inspector else "—",
        ]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
