"""What the run boundary costs: cold and warm suite runs with and without bubblewrap rooms.

    .venv/bin/python bench/bench_boundary.py [--server library] [--sdk-version 2.3.0] [--config PATH] [--quick]
                                             [--suite-rounds 3] [--suite-room-only] [--recorder [--rounds 5]]

Three set-ups, each in a fresh folder: `suites.sandbox: off` (the installers use the machine's usual
download caches), bubblewrap rooms with caches of their own only (`suites.shared_wheels: false`, as before
the shared wheel cache), and rooms with the shared wheel cache. In each: the first-ever cold `run_check`
(nothing built, the conformance suite not installed, the shared cache empty), a warm one (the sealed
environment reused: its digest is checked first), the conformance CLI alone against the server (the
baseline, per requirement set), then a cold one for a new environment of the same dependencies (the suite
installed, and the shared cache filled by the first build: many teams testing the same SDK version).
Figures are ratios to the suite alone; also the env build's part of each cold run, how long checking a
sealed environment's digest takes, the boundary's cost (rooms / off) and the cache's gain (shared / own).
Then the conformance suite's own room: the same suite (the pinned one, installed in a room) against the same
server (in its room), per requirement set, run on the host (`suites.sandbox: none`, the baseline) and in its
run room (one forwarded port to the server), alternately, `--suite-rounds` times each: the medians and ratio.
--quick (the smoke test's mode; installs nothing): the example server's start-up from this environment as a
run starts it, without a room (the baseline) and inside one, alternately, twice each (the mean), and their ratio;
and a small suite of our own (bench/fakes/conformance_suite.py: one request, one checks.json) against a Node
server in a room, on the host and in the suite's room, alternately, three times each (the medians and ratio).
--recorder (installs nothing): an install room (network through the egress proxy) whose command opens 50
connections to the proxy's port, with the room's recorder of direct connections and raw sockets (watcher/boundary/
guard.py: every connect is told to it) and without it (the way before), alternately: the first of each in this
process (cold: the recorder's probe and first start included) and the median of `--rounds` more (warm), and their
ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_suite import bench_config, suite_alone  # noqa: E402
from bench.fakes import conformance_suite as fake_suite  # noqa: E402
from watcher.boundary import sandbox, toolchain  # noqa: E402
from watcher.boundary.network import Reach  # noqa: E402
from watcher.boundary.process import ServerProcess, free_port, scrubbed_env  # noqa: E402
from watcher.config import LoadedConfig, load_config  # noqa: E402
from watcher.suites.build.env import env_digest, remove_env  # noqa: E402
from watcher.suites.judge import conformance  # noqa: E402
from watcher.suites.runner import _Run, run_check  # noqa: E402


def with_sandbox(config_path: Path, mode: str, shared_wheels: bool = True) -> Path:
    data = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    data["suites"]["sandbox"] = mode
    data["suites"]["shared_wheels"] = shared_wheels
    config_path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return config_path


def timed_check(loaded: LoadedConfig, server: str, version: str, label: str) -> tuple[float, dict[str, Any]]:
    began = time.monotonic()
    report = run_check(loaded, server, version)
    seconds = time.monotonic() - began
    if report["verdict"] != "pass":
        print(f"note: {label} run's verdict is {report['verdict']}: {report['reasons']}")
    return seconds, report


def measure(source: Path, server: str, version: str, mode: str, folder: Path, shared: bool = True) -> dict[str, float]:
    """In a fresh folder: the first-ever cold run (nothing built, the suite not installed), a warm one, and
    a cold one for a new environment with the suite and (when `shared`) the shared wheels left from before."""
    config_path = with_sandbox(bench_config(source, server, folder), mode, shared)
    loaded = load_config(config_path)
    first_s, first = timed_check(loaded, server, version, f"{mode} first-ever cold")
    warm_s, warm = timed_check(loaded, server, version, f"{mode} warm")
    assert not first["install"]["cached"] and warm["install"]["cached"], (first["install"], warm["install"])
    env_dir = Path(warm["install"]["path"])
    began = time.monotonic()
    env_digest(env_dir)
    digest_s = time.monotonic() - began
    alone, _ = suite_alone(config_path, server, version)
    # Another environment of the same dependencies, as when many teams test the same SDK version.
    remove_env(env_dir)
    cold_s, cold = timed_check(loaded, server, version, f"{mode} cold")
    assert not cold["install"]["cached"], cold["install"]
    return {
        "first": first_s,
        "first_build": first["install"]["seconds"],
        "cold": cold_s,
        "cold_build": cold["install"]["seconds"],
        "warm": warm_s,
        "alone": alone,
        "digest": digest_s,
    }


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


def suite_room_cost(
    tool: conformance.ConformanceTool, reach: Reach, revisions: list[str], folder: Path, rounds: int
) -> dict[str, list[float]]:
    """The suite against `reach`, on the host (`none`) and in its room, alternately: seconds per run of all sets."""
    host, room = sandbox.choose("none"), sandbox.choose("bubblewrap")
    times: dict[str, list[float]] = {"host": [], "room": []}
    for number in range(rounds):
        for label, boundary in (
            (("host", host), ("room", room)) if number % 2 == 0 else (("room", room), ("host", host))
        ):
            began = time.monotonic()
            for revision in revisions:
                out = Path(tempfile.mkdtemp(dir=folder))
                run, results = conformance.invoke_suite(
                    tool,
                    server=reach,
                    boundary=boundary,
                    arguments=["--requirements", revision],
                    out_dir=out,
                    timeout=600,
                    secret_names=set(),
                )
                if not conformance.collect_checks(results):
                    raise RuntimeError(f"the suite wrote no results ({label}, {run.describe()}): {run.tail}")
            times[label].append(time.monotonic() - began)
    return times


def report_suite_room(times: dict[str, list[float]], what: str) -> None:
    host, room = statistics.median(times["host"]), statistics.median(times["room"])
    print(f"{what} on the host (baseline): median {host:.2f} s of {len(times['host'])}")
    print(f"{what} in its room (one forwarded port): median {room:.2f} s of {len(times['room'])}")
    print(f"suite room cost: {room / host:.2f} x (room / host), {room - host:+.2f} s a run")


def quick_suite_room(folder: Path) -> None:
    """A suite of our own against a Node server in a room: on the host and in the suite's room."""
    boundary = sandbox.choose("bubblewrap")
    project = folder / "server"
    fake_suite.write_node_server(project)
    root = folder / "tools" / "node_modules" / fake_suite.PACKAGE
    fake_suite.write_suite(root, "0.0.0", {"2025-11-25": ["server-reach"]})
    tool = conformance.ConformanceTool(fake_suite.PACKAGE, "0.0.0", root)
    port = free_port()
    with ServerProcess(
        [toolchain.node(), "server.js", "--port", str(port)],
        cwd=project,
        env=scrubbed_env(extra={"SERVER_NAME": "bench"}),
        log_dir=folder / "logs",
        transport="http",
        port=port,
        launcher=boundary.room(readable=[project, toolchain.node_root()]),
    ) as server:
        started = server.start(timeout=60)
        reach = server.reach()
        if not started.ok or reach is None:
            raise RuntimeError(f"the bench server did not start: {started.error}\n{started.evidence}")
        times = suite_room_cost(tool, reach, ["2025-11-25"], folder, rounds=6)
    report_suite_room(times, "a one-request suite")


def real_suite_room(config_path: Path, server_name: str, version: str, rounds: int) -> None:
    """The pinned suite against the server on `version` (built and started in rooms), per requirement set."""
    loaded = load_config(config_path)
    server = loaded.config.server(server_name)
    run = _Run(loaded, server, version, None)
    run.run_dir.mkdir(parents=True, exist_ok=True)
    env = run.install(version)
    settings = loaded.config.conformance
    tool = conformance.ensure_conformance(
        settings.package, run.envs_dir / "_tools", boundary=run.sandbox, registry=settings.npm_registry
    )
    with run.start_server(env, run.run_dir) as process:
        started = process.start(server.timeouts.start)
        reach = process.reach()
        if not started.ok or reach is None:
            raise RuntimeError(f"the server did not start: {started.error}\n{started.evidence}")
        times = suite_room_cost(tool, reach, list(server.requirements), run.run_dir, rounds)
    report_suite_room(times, f"the pinned suite ({', '.join(server.requirements)})")


CONNECTS = """
import socket
for _ in range(50):
    socket.create_connection(("127.0.0.1", 3128), timeout=10).close()
"""


def install_room_seconds(boundary: sandbox.Sandbox, folder: Path) -> float:
    """One install room (the proxy's network) running CONNECTS, from its start to its end."""
    room = boundary.room(readable=[], writable=[folder], network="registry", audit_as=("bench", "connects"))
    began = time.perf_counter()
    proc = room.start(["/usr/bin/python3", "-c", CONNECTS], cwd=str(folder), env={"PATH": "/usr/bin:/bin"})
    code = proc.wait(timeout=120)
    room.close()
    if code != 0:
        raise RuntimeError(f"the install room's command ended with {code}")
    return time.perf_counter() - began


def recorder_cost(rounds: int) -> int:
    import dataclasses

    from watcher.boundary import guard

    boundary = sandbox.choose("bubblewrap")
    if not boundary.active:
        print(f"the run boundary cannot be had here: {boundary.reason}")
        return 2
    before = dataclasses.replace(boundary, record_direct=False)
    with tempfile.TemporaryDirectory(prefix="bench-recorder-") as tmp:
        folder = Path(tmp)
        boundary.hand_over(folder)
        cold_off = install_room_seconds(before, folder)
        began = time.perf_counter()
        problem = guard.problem()  # the recorder's probe: once per process, paid by its first room
        cold_on = install_room_seconds(boundary, folder) + (time.perf_counter() - began)
        if problem is not None:
            print(f"no recorder here: {problem}")
            return 2
        times: dict[str, list[float]] = {"off": [], "on": []}
        for number in range(rounds):
            order = (("off", before), ("on", boundary)) if number % 2 == 0 else (("on", boundary), ("off", before))
            for name, chosen in order:
                times[name].append(install_room_seconds(chosen, folder))
    off, on = statistics.median(times["off"]), statistics.median(times["on"])
    print(f"install room, 50 connects to the proxy: cold without the recorder {cold_off:.3f} s, with {cold_on:.3f} s")
    print(f"  cold ratio {cold_on / cold_off:.2f} x (the recorder's probe and first start included)")
    print(f"  warm, median of {rounds} each, alternating: without {off:.3f} s, with {on:.3f} s: {on / off:.2f} x")
    return 0


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
    with tempfile.TemporaryDirectory(prefix="bench-boundary-suite-") as tmp:
        folder = Path(tmp) / "bench"  # 0755: the rooms' user reaches what is bound from inside it
        folder.mkdir()
        quick_suite_room(folder)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(ROOT / "config" / "watcher.yaml"))
    parser.add_argument("--server", default="library")
    parser.add_argument("--sdk-version", default="2.3.0")
    parser.add_argument("--rounds", type=int, default=1, help="rotate the three set-ups this many times")
    parser.add_argument("--suite-rounds", type=int, default=3, help="runs of the suite on the host and in its room")
    parser.add_argument("--suite-room-only", action="store_true", help="only the suite on the host and in its room")
    parser.add_argument("--quick", action="store_true", help="server start-ups only, nothing installed")
    parser.add_argument("--recorder", action="store_true", help="install rooms with and without the recorder")
    args = parser.parse_args()
    if args.quick:
        return quick()
    if args.recorder:
        return recorder_cost(max(args.rounds, 5))
    if args.suite_room_only:
        return suite_room_main(args)
    boundary = sandbox.choose("bubblewrap")
    if not boundary.active:
        print(f"the run boundary cannot be had here: {boundary.reason}")
        return 2
    print(f"server {args.server}, SDK {args.sdk_version}; boundary: {boundary.describe()}")
    setups = {
        "off": ("off", True),
        "rooms, own caches": ("bubblewrap", False),
        "rooms, shared wheels": ("bubblewrap", True),
    }
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in setups}
    names = list(setups)
    for number in range(args.rounds):
        # Rotate which set-up goes first: the first one also pays for the machine's cold page cache.
        for name in names[number % len(names) :] + names[: number % len(names)]:
            mode, shared = setups[name]
            folder = Path(tempfile.mkdtemp(prefix="bench-boundary-"))
            try:
                rounds[name].append(measure(Path(args.config), args.server, args.sdk_version, mode, folder, shared))
            finally:
                remove_env(folder)
    figures = {name: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for name, runs in rounds.items()}
    print(f"medians of {args.rounds} round(s); ratios to the suite alone measured in the same set-up:")
    for name, f in figures.items():
        print(
            f"{name:<21} suite alone {f['alone']:5.1f} s | warm {f['warm']:5.1f} s = {f['warm'] / f['alone']:.2f} x"
            f" | cold {f['cold']:5.1f} s = {f['cold'] / f['alone']:.2f} x (build {f['cold_build']:.1f} s)"
            f" | first-ever cold {f['first']:5.1f} s = {f['first'] / f['alone']:.2f} x (build {f['first_build']:.1f} s)"
            f" | digest check {f['digest']:.2f} s"
        )
    off, own, shared_f = figures["off"], figures["rooms, own caches"], figures["rooms, shared wheels"]
    print(
        f"boundary cost (rooms, own caches / off): warm {own['warm'] / off['warm']:.2f} x,"
        f" cold {own['cold'] / off['cold']:.2f} x, first-ever cold {own['first'] / off['first']:.2f} x"
    )
    print(
        f"shared wheels (shared / own caches): cold build {shared_f['cold_build'] / own['cold_build']:.2f} x,"
        f" cold run {shared_f['cold'] / own['cold']:.2f} x, first-ever cold {shared_f['first'] / own['first']:.2f} x"
    )
    return suite_room_main(args)


def suite_room_main(args: argparse.Namespace) -> int:
    folder = Path(tempfile.mkdtemp(prefix="bench-boundary-suite-"))
    try:
        config_path = with_sandbox(bench_config(Path(args.config), args.server, folder), "bubblewrap")
        real_suite_room(config_path, args.server, args.sdk_version, args.suite_rounds)
    finally:
        remove_env(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
