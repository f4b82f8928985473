"""The date-sensitive tests pass whatever the day: rerun them with the wall clock moved to three awkward instants.

tests/wall_clock/sitecustomize.py moves the wall clock (time-machine) of the test process and of every
Python process it starts — the service included — so a test that reads the wall clock where it should fix
its own shows up here instead of failing one evening a week. (libfaketime was tried first: it also moves
the monotonic clock that thread waits use, which stalls APScheduler; time-machine leaves that alone.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

SHIM = Path(__file__).resolve().parent / "wall_clock"

INSTANTS = {
    "monday-after-the-digest-hour": "2026-12-07T10:00:00+00:00",
    "sunday-one-minute-before-the-week-ends": "2026-12-13T23:59:00+00:00",
    "29-february": "2028-02-29T12:00:00+00:00",
}

DATE_SENSITIVE = [
    "tests/test_clock.py",
    "tests/test_service.py",
    "tests/test_poll_flow.py",
    "tests/spec",
    "tests/digest",
]
"""Tests that start the service or compute a date. The slow suite-run service tests
(tests/test_crash_safety.py) pin the clock the same way through tests/helpers.py."""


@pytest.mark.parametrize("instant", INSTANTS.values(), ids=list(INSTANTS))
def test_the_date_sensitive_tests_pass_at(instant: str, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "MCP_WATCHER_TEST_WALL_CLOCK": instant,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SHIM), os.environ.get("PYTHONPATH")])),
    }
    probe = subprocess.run(
        [sys.executable, "-c", "import datetime; print(datetime.datetime.now(datetime.timezone.utc).isoformat())"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout.startswith(instant[:10]), f"the shim did not move the clock: {probe.stdout}{probe.stderr}"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "--basetemp", str(tmp_path)]
        + DATE_SENSITIVE,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, f"at {instant}: {summary}\n{result.stdout[-6000:]}\n{result.stderr[-2000:]}"
    assert " passed" in summary and "failed" not in summary, summary
