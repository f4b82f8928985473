"""What the install rooms' egress proxy costs: cold and warm pip installs through it, side by side with the other
ways a room has had out (the run boundary's part of the cost is bench_boundary.py's).

    .venv/bin/python bench/bench_egress.py [--package mcp==2.3.0] [--rounds 3] [--quick]

Each install is `pip install --target <fresh folder>` by a venv of /usr/bin/python3, in an install room (or on
the host, the baseline). Cold: an empty pip cache; warm: the cache the cold one filled (the index's pages are
still asked for). The set-ups alternate which goes first each round; the figures are medians, with ratios
measured in the same run.

- full run (the package registries: real traffic): the package from pip's configured index, on the host
  (`off`), in a room through slirp4netns (`slirp`: what installs had before the proxy) and in a room through the
  watcher's egress proxy (`proxy`: no route out, the configured indexes and the file hosts they name only);
- --quick (the smoke test's mode; loopback only): a one-module wheel from a simple index on 127.0.0.1, on the
  host, in a room with the index's port forwarded by the relay (`forward`: the path a loopback registry had)
  and in a room through the proxy.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import http.server
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from watcher.boundary import sandbox  # noqa: E402
from watcher.boundary.launch import Host, HostReason, Launcher  # noqa: E402
from watcher.boundary.network import Endpoint, Forwarded, Network  # noqa: E402
from watcher.suites.build import indexes  # noqa: E402

SYSTEM_PYTHON = "/usr/bin/python3"
WHEEL = "bench_probe-1.0-py3-none-any.whl"


def probe_wheel(folder: Path) -> Path:
    """A one-module wheel, made here (no build step: the install's own cost is what is measured)."""
    path = folder / WHEEL
    files = {
        "bench_probe/__init__.py": "VALUE = 1\n",
        "bench_probe-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: bench-probe\nVersion: 1.0\n",
        "bench_probe-1.0.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = [f"{name},," for name in files] + ["bench_probe-1.0.dist-info/RECORD,,"]
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr("bench_probe-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def serve_index(wheel: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A simple index on 127.0.0.1 with the one wheel (page and file on the same port: one forwarded port)."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()

    class Index(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            port = int(self.server.server_address[1])  # type: ignore[index]
            if self.path.rstrip("/") == "/simple/bench-probe":
                link = f"http://127.0.0.1:{port}/files/{wheel.name}#sha256={digest}"
                body, kind = f'<html><body><a href="{link}">{wheel.name}</a></body></html>'.encode(), "text/html"
            elif self.path == f"/files/{wheel.name}":
                body, kind = wheel.read_bytes(), "application/octet-stream"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/simple"


def timed_install(launcher: Launcher, venv: Path, work: Path, spec: str, index: str, cache: Path) -> float:
    target = Path(tempfile.mkdtemp(dir=work, prefix="target-"))
    target.chmod(0o777)
    command = [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--quiet"]
    command += ["--index-url", index, "--cache-dir", str(cache), "--target", str(target), spec]
    env = {"PATH": "/usr/bin:/bin", "PIP_INDEX_URL": index, "HOME": str(work)}
    began = time.monotonic()
    with open(work / "pip.log", "ab") as log:
        proc = launcher.start(command, cwd=str(work), env=env, stdout=log, stderr=log, start_new_session=True)
        code = proc.wait(timeout=900)
    seconds = time.monotonic() - began
    launcher.close()
    refused = launcher.refusals()
    shutil.rmtree(target, ignore_errors=True)
    if code != 0 or refused:
        tail = (work / "pip.log").read_text(errors="replace")[-1500:]
        raise RuntimeError(f"the install failed ({launcher.describe()}, exit {code}, refused {refused}):\n{tail}")
    return seconds


def measure(
    setups: dict[str, Callable[[], Launcher]], venv: Path, work: Path, spec: str, index: str, rounds: int
) -> dict[str, dict[str, float]]:
    """Cold and warm installs per set-up, alternating which goes first each round."""
    times: dict[str, dict[str, list[float]]] = {name: {"cold": [], "warm": []} for name in setups}
    names = list(setups)
    for number in range(rounds):
        for name in names[number % len(names) :] + names[: number % len(names)]:
            cache = Path(tempfile.mkdtemp(dir=work, prefix="cache-"))
            cache.chmod(0o777)
            for kind in ("cold", "warm"):
                times[name][kind].append(timed_install(setups[name](), venv, work, spec, index, cache))
            shutil.rmtree(cache, ignore_errors=True)
    return {name: {kind: statistics.median(values) for kind, values in t.items()} for name, t in times.items()}


def report(figures: dict[str, dict[str, float]], baseline: str, rounds: int) -> None:
    print(f"medians of {rounds} round(s); ratios to `{baseline}` (and to `off`) measured in the same run:")
    for name, f in figures.items():
        base, off = figures[baseline], figures["off"]
        print(
            f"{name:<8} cold {f['cold']:6.2f} s = {f['cold'] / base['cold']:.2f} x {baseline}, "
            f"{f['cold'] / off['cold']:.2f} x off | warm {f['warm']:6.2f} s = {f['warm'] / base['warm']:.2f} x "
            f"{baseline}, {f['warm'] / off['warm']:.2f} x off"
        )


def room(box: sandbox.Sandbox, venv: Path, work: Path, network: Network, learn: tuple[str, ...] = ()) -> Launcher:
    return box.room(readable=[venv], writable=[work], network=network, audit_as=("bench", "pip"), learn_from=learn)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", default="mcp==2.3.0", help="what the full run installs (with its dependencies)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="loopback only: a one-module wheel from a local index")
    args = parser.parse_args()
    box = sandbox.choose("bubblewrap")
    if not box.active or not Path(SYSTEM_PYTHON).exists():
        print(f"no room measured: the run boundary cannot be had here ({box.reason}) or no {SYSTEM_PYTHON}")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-egress-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir(mode=0o777)
        work.chmod(0o777)  # the rooms' user (65534 under a root watcher) writes its targets and caches here
        venv = Path(tmp) / "venv"
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=600)
        host: Callable[[], Launcher] = functools.partial(Host, HostReason.OPTED_OUT)
        if args.quick:
            server, index = serve_index(probe_wheel(Path(tmp)))
            port = server.server_address[1]
            box = dataclasses.replace(box, index_sources=tuple)
            setups = {
                "off": host,
                "forward": lambda: room(box, venv, work, Forwarded(port, Endpoint(port))),
                "proxy": lambda: room(box, venv, work, "registry"),
            }
            print("a one-module wheel from a simple index on 127.0.0.1 (pip, --target, cold: empty cache)")
            figures = measure(setups, venv, work, "bench-probe==1.0", index, rounds=2)
            server.shutdown()
            report(figures, "forward", 2)
            proxy, forward = figures["proxy"], figures["forward"]
            print(
                f"egress proxy cost (proxy / forward): cold {proxy['cold'] / forward['cold']:.2f} x, "
                f"warm {proxy['warm'] / forward['warm']:.2f} x"
            )
            return 0
        if box.slirp is None:
            print("slirp4netns is not installed: no side-by-side")
            return 2
        sources = indexes.default_indexes()
        index = sources[0]
        name = args.package.split("==")[0]
        box = dataclasses.replace(box, index_sources=lambda: sources)
        learn = tuple(indexes.learn_urls("python", name, {}, sources))
        setups = {
            "off": host,
            "slirp": lambda: room(box, venv, work, "slirp"),
            "proxy": lambda: room(box, venv, work, "registry", learn),
        }
        print(f"{args.package} from {index} (pip, --target, cold: empty cache)")
        figures = measure(setups, venv, work, args.package, index, args.rounds)
        report(figures, "slirp", args.rounds)
        proxy, slirp = figures["proxy"], figures["slirp"]
        print(
            f"egress proxy cost (proxy / slirp): cold {proxy['cold'] / slirp['cold']:.2f} x, "
            f"warm {proxy['warm'] / slirp['warm']:.2f} x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
