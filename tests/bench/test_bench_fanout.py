"""The fan-out benchmark still starts and measures (its quick mode) against its limit-enforcing GitHub."""

from __future__ import annotations

import subprocess
import sys

from tests.suites.helpers import ROOT


def test_the_fanout_bench_quick_mode_gets_every_result_inside_the_limits():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_fanout.py"), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    fan_out = next(line for line in done.stdout.splitlines() if line.startswith("fan-out"))
    assert "30/30 results" in fan_out and "limits hit 0" in fan_out, done.stdout
    assert "counted GitHub requests per run" in fan_out and "first dispatch → last result" in fan_out
    assert any(line.startswith("per-run way (baseline): 30/30 results") for line in done.stdout.splitlines())
    assert "× the baseline's requests per run" in done.stdout
