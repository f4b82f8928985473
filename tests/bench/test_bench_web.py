"""The page benchmark still starts and measures (its quick mode), so a rename can never silently break it."""

from __future__ import annotations

import subprocess
import sys

from tests.suites.helpers import ROOT


def test_the_page_bench_quick_mode_runs_and_prints_its_figures():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_web.py"), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if " ms" in line or "ms " in line]
    assert [line.split()[3] for line in lines] == ["/", "/api/status", "/?team=team-07"], done.stdout
    assert all("× /healthz" in line and "× bare SQLite read" in line for line in lines), done.stdout
