"""Timing helpers the benchmarks share: a command's wall time and peak RSS, measured in a child process.

Peak RSS is the child's own VmHWM (/proc/self/status), printed by the child as it exits: wait4's ru_maxrss
would count the parent's pages too (the child is forked from the benchmark, which holds the test data).
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


_PEAK = (
    "import atexit, sys\n"
    "def _peak():\n"
    "    with open('/proc/self/status') as f:\n"
    "        kb = [line.split()[1] for line in f if line.startswith('VmHWM:')]\n"
    "    sys.stderr.write('\\npeak-rss-kb=' + (kb[0] if kb else '0') + '\\n')\n"
    "atexit.register(_peak)\n"
)


@dataclass(frozen=True)
class Sample:
    seconds: float
    peak_rss: int
    """Bytes: the child's own peak resident set (0 when the child did not report it)."""
    returncode: int


def run(argv: list[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> Sample:
    """Run `argv` with its output thrown away; its wall time from start to exit and its peak RSS."""
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    errors = done.stderr.decode(errors="replace")
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}:\n{errors[-2000:]}")
    marks = [line for line in errors.splitlines() if line.startswith("peak-rss-kb=")]
    return Sample(seconds, int(marks[-1].split("=", 1)[1]) * 1024 if marks else 0, done.returncode)


def median_of(runs: int, argv: list[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> Sample:
    """The run of median wall time out of `runs` (its own peak RSS with it)."""
    samples = sorted((run(argv, cwd=cwd, env=env) for _ in range(runs)), key=lambda s: s.seconds)
    return samples[len(samples) // 2]


def python(*args: str) -> list[str]:
    """This interpreter, with `args`."""
    return [sys.executable, *args]


def python_code(code: str, *args: str) -> list[str]:
    """`python -c code args…`, reporting its peak RSS."""
    return [sys.executable, "-c", _PEAK + code, *args]


def mcp_watcher(*args: str) -> list[str]:
    """The CLI, as `python -m watcher.cli` of this checkout does it, reporting its peak RSS."""
    code = "import runpy, sys\nsys.argv[0] = 'mcp-watcher'\nrunpy.run_module('watcher.cli', run_name='__main__')"
    return python_code(code, *args)


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "n/a"


__all__ = ["ROOT", "Sample", "mb", "mcp_watcher", "median_of", "python", "python_code", "ratio", "run"]
