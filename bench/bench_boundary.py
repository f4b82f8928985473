"""What the run boundary costs: cold and warm suite runs with and without bubblewrap rooms.

    .venv/bin/python bench/bench_boundary.py [--server library] [--sdk-version 2.3.0] [--config PATH] [--quick]

For each of `suites.sandbox: off` and `bubblewrap` (each in a fresh folder): a cold `run_check` (the
environment and the conformance suite installed; without a room the installers use the machine's usual
download caches, in a room each build has caches of its own), then a warm one (the sealed environment
reused: its digest is checked first). The baseline, measured in the same run: the conformance CLI alone
against the server, per requirement set. Also: how long checking a sealed environment's digest takes.
Figures are ratios to the suite alone, and the boundary's cost as the ratio bubblewrap / off.
--quick (the smoke test's mode; installs nothing): the example server's start-up from this environment as a
run starts it, without a room (the baseline) and inside one, alternately, twice each (the mean), and their ratio.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_suite import bench_config, suite_alone  # noqa: E402
from watcher.config import load_config  # noqa: E402
from watcher.suites.build.env import env_digest  # noqa: E402
from watcher.suites.run import sandbox  # noqa: E402
from watcher.suites.run.process import ServerProcess, free_port, scrubbed_env  # noqa: E402
from watcher.suites.runner import run_check  # noqa: E402


def with_sandbox(config_path: Path, mode: str) -> Path:
    data = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    data["suites"]["sandbox"] = mode
    config_path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return config_path


def measure(source: Path, server: str, version: str, mode: str, folder: Path) -> dict[str, float]:
    config_path = with_sandbox(bench_config(source, server, folder), mode)
    loaded = load_config(config_path)
    began = time.monotonic()
    cold = run_check(loaded, server, version)
    cold_s = time.monotonic() - began
    began = time.monotonic()
    warm = run_check(loaded, server, version)
    warm_s = time.monotonic() - began
    for label, report in (("cold", cold), ("warm", warm)):
        if report["verdict"] != "pass":
            print(f"note: {mode} {label} run's verdict is {report['verdict']}: {report['reasons']}")
    assert not cold["install"]["cached"] and warm["install"]["cached"], (cold["install"], warm["install"])
    env_dir = Path(warm["install"]["path"])
    began = time.monotonic()
    env_digest(env_dir)
    digest_s = time.monotonic() - began
    alone, _ = suite_alone(config_path, server, version)
    return {"cold": cold_s, "warm": warm_s, "alone": alone, "digest": digest_s}


def start_seconds(boundary: sandbox.Sandbox, folder: Path) -> float:
    """One start of examples/library (streamable HTTP) until it answers MCP, in a room when `boundary` is on."""
    port = free_port()
    library = ROOT / "examples" / "library"
    command = [sys.executable, "-m", "library_server", "--port", str(port)]
    env = scrubbed_env(extra={"PYTHONPATH": str(library)})
    # The room reads what this interpreter and the example need, as a run's room reads its sealed environment.
    readable = {Path(p).resolve() for p in (ROOT, sys.prefix, sys.base_prefix, Path(sys.executable).resolve().parent)}
    launcher = boundary.room(readable=sorted(readable))
    log_dir = Path(tempfile.mkdtemp(dir=folder))
    with ServerProcess(
        command, cwd=library, env=env, log_dir=log_dir, transport="http", port=port, launcher=launcher
    ) as server:
        started = server.start(timeout=60)
    if not started.ok:
        raise RuntimeError(f"the example server did not start ({boundary.mode}): {started.error}\n{started.evidence}")
    return started.seconds


def quick() -> int:
    off = sandbox.choose("off")
    boundary = sandbox.choose("bubblewrap")
    times: dict[str, list[float]] = {"off": [], "bubblewrap": []}
    with tempfile.TemporaryDirectory(prefix="bench-boundary-quick-") as tmp:
        for number in range(2):
            # Alternate which goes first, as the full run does, so that load falls on both alike.
            order = (off, boundary) if number % 2 == 0 else (boundary, off)
            for chosen in order:
                if chosen.active or chosen is off:
                    times["bubblewrap" if chosen.active else "off"].append(start_seconds(chosen, Path(tmp)))
    base = statistics.mean(times["off"])
    print(f"example server start-up, no room (baseline): mean {base:.2f} s of {len(times['off'])}")
    if not times["bubblewrap"]:
        print(f"no room measured: the run boundary cannot be had here ({boundary.reason})")
        return 0
    room = statistics.mean(times["bubblewrap"])
    print(f"example server start-up, in a bubblewrap room: mean {room:.2f} s of {len(times['bubblewrap'])}")
    print(f"boundary cost at start-up: {room / base:.2f} x (bubblewrap / off)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(ROOT / "config" / "watcher.yaml"))
    parser.add_argument("--server", default="library")
    parser.add_argument("--sdk-version", default="2.3.0")
    parser.add_argument("--rounds", type=int, default=1, help="alternate off/bubblewrap this many times")
    parser.add_argument("--quick", action="store_true", help="server start-ups only, nothing installed")
    args = parser.parse_args()
    if args.quick:
        return quick()
    boundary = sandbox.choose("bubblewrap")
    if not boundary.active:
        print(f"the run boundary cannot be had here: {boundary.reason}")
        return 2
    print(f"server {args.server}, SDK {args.sdk_version}; boundary: {boundary.describe()}")
    rounds: dict[str, list[dict[str, float]]] = {"off": [], "bubblewrap": []}
    for number in range(args.rounds):
        # Alternate which mode goes first: the first one also pays for the machine's cold page cache.
        for mode in ("off", "bubblewrap") if number % 2 == 0 else ("bubblewrap", "off"):
            folder = Path(tempfile.mkdtemp(prefix=f"bench-boundary-{mode}-"))
            try:
                rounds[mode].append(measure(Path(args.config), args.server, args.sdk_version, mode, folder))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    figures = {mode: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for mode, runs in rounds.items()}
    print(f"medians of {args.rounds} round(s):")
    for mode, f in figures.items():
        print(
            f"{mode:<10} suite alone {f['alone']:6.1f} s | warm {f['warm']:6.1f} s = {f['warm'] / f['alone']:.2f} x"
            f" | cold {f['cold']:6.1f} s = {f['cold'] / f['alone']:.2f} x | digest check {f['digest']:.2f} s"
        )
    off, on = figures["off"], figures["bubblewrap"]
    warm, cold = on["warm"] / off["warm"], on["cold"] / off["cold"]
    print(f"boundary cost: warm {warm:.2f} x, cold {cold:.2f} x (bubblewrap / off)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
