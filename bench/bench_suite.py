"""Suite-run overhead: one server x one SDK version x two requirement sets.

    .venv/bin/python bench/bench_suite.py [--server library] [--sdk-version 2.3.0] [--config PATH]

Three figures:
- cold: `run_check` with an empty environments folder (the SDK environment and the conformance
  suite are installed; the installers' own download caches are left as they are on the machine);
- warm: the same run again (environments reused);
- suite alone: the conformance CLI itself, once per requirement set, against a server already up.
Goals: warm <= 1.5 x suite alone, cold <= 3 x suite alone.
--quick (the smoke test's mode; installs nothing): the example server's start-up as a run starts it — its own
process group, a scrubbed environment, ready when it answers MCP — from this environment, median of 3.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from watcher.boundary import toolchain  # noqa: E402
from watcher.boundary.launch import Host, HostReason  # noqa: E402
from watcher.boundary.process import ServerProcess, free_port, scrubbed_env  # noqa: E402
from watcher.config import load_config  # noqa: E402
from watcher.suites.judge import conformance  # noqa: E402
from watcher.suites.runner import _Run, run_check  # noqa: E402

WARM_GOAL, COLD_GOAL = 1.5, 3.0


def bench_config(source: Path, server: str, folder: Path) -> Path:
    """A copy of the config with its paths made absolute and runs/environments in `folder`. Relative paths
    in a config file mean its own folder's (docs/configuration.md), so they are resolved against that."""
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    for entry in data.get("servers", []):
        for key in ("path", "baseline_snapshot", "expected_failures"):
            if entry.get(key) and not Path(entry[key]).is_absolute():
                entry[key] = str((source.resolve().parent / entry[key]).resolve())
    data["servers"] = [s for s in data["servers"] if s["name"] == server]
    data["teams"] = [{**t, "servers": [s for s in t.get("servers", []) if s == server]} for t in data["teams"]]
    data["state"] = str(folder / "watcher.db")
    data["suites"] = {**data.get("suites", {}), "runs_dir": str(folder / "runs"), "envs_dir": str(folder / "envs")}
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def suite_alone(config_path: Path, server_name: str, version: str) -> tuple[float, list[float]]:
    """Time the conformance CLI by itself (per requirement set) against the server started beforehand."""
    loaded = load_config(config_path)
    server = loaded.config.server(server_name)
    run = _Run(loaded, server, version, None)
    run.run_dir.mkdir(parents=True, exist_ok=True)
    env = run.install(version)
    tool = conformance.ensure_conformance(
        loaded.config.conformance.package, run.envs_dir / "_tools", boundary=run.sandbox, secret_names=run.secret_names
    )
    expected = loaded.resolve(server.expected_failures) if server.expected_failures else None
    times = []
    with run.start_server(env, run.run_dir) as process:
        started = process.start(server.timeouts.start)
        if not started.ok:
            raise SystemExit(f"the server did not start: {started.error}\n{started.evidence}")
        for revision in server.requirements:
            out = run.run_dir / "alone" / revision
            command = [toolchain.node(), str(tool.cli), "server", "--url", str(process.url)]
            command += ["--requirements", revision, "-o", str(out)]
            baseline = conformance.expected_failures_path(expected, revision)
            if baseline:
                command += ["--expected-failures", str(baseline)]
            began = time.monotonic()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, timeout=900)
            times.append(time.monotonic() - began)
    return sum(times), times


def start_seconds(folder: Path) -> float:
    """One start of examples/library (streamable HTTP) from this environment until it answers MCP."""
    port = free_port()
    command = [sys.executable, "-m", "library_server", "--port", str(port)]
    env = scrubbed_env(extra={"PYTHONPATH": str(ROOT / "examples" / "library")})
    log_dir = Path(tempfile.mkdtemp(dir=folder))
    with ServerProcess(
        command,
        cwd=ROOT / "examples" / "library",
        env=env,
        log_dir=log_dir,
        transport="http",
        port=port,
        launcher=Host(HostReason.OPTED_OUT),  # the start-up alone, without a room (bench_boundary has both)
    ) as server:
        started = server.start(timeout=60)
    if not started.ok:
        raise RuntimeError(f"the example server did not start: {started.error}\n{started.evidence}")
    return started.seconds


def quick() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-suite-quick-") as tmp:
        times = sorted(start_seconds(Path(tmp)) for _ in range(3))
    each = ", ".join(f"{t:.2f}" for t in times)
    print(f"example server start-up (until it answers MCP): median {times[1]:.2f} s (of {each})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(ROOT / "config" / "watcher.yaml"))
    parser.add_argument("--server", default="library")
    parser.add_argument("--sdk-version", default="2.3.0")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--quick", action="store_true", help="the server start-up only, nothing installed")
    args = parser.parse_args()
    if args.quick:
        return quick()
    folder = Path(tempfile.mkdtemp(prefix="bench-suite-"))
    try:
        config_path = bench_config(Path(args.config), args.server, folder)
        loaded = load_config(config_path)
        sets = loaded.config.server(args.server).requirements
        print(f"server {args.server}, SDK {args.sdk_version}, requirement sets {', '.join(sets)}")

        began = time.monotonic()
        cold_report = run_check(loaded, args.server, args.sdk_version)
        cold = time.monotonic() - began
        began = time.monotonic()
        warm_report = run_check(loaded, args.server, args.sdk_version)
        warm = time.monotonic() - began
        alone, per_set = suite_alone(config_path, args.server, args.sdk_version)

        for label, report in (("cold", cold_report), ("warm", warm_report)):
            if report["verdict"] != "pass":
                print(f"note: the {label} run's verdict is {report['verdict']}: {report['reasons']}")
        assert not cold_report["install"]["cached"] and warm_report["install"]["cached"]
        detail = ", ".join(f"{s}: {t:.1f} s" for s, t in zip(sets, per_set, strict=True))
        print(f"suite alone : {alone:6.1f} s  ({detail})")
        print(f"warm run    : {warm:6.1f} s  = {warm / alone:.2f} x suite alone (goal <= {WARM_GOAL})")
        print(f"cold run    : {cold:6.1f} s  = {cold / alone:.2f} x suite alone (goal <= {COLD_GOAL})")
        ok = warm / alone <= WARM_GOAL and cold / alone <= COLD_GOAL
        print("goals met" if ok else "goals NOT met")
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
