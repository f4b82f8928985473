"""The date-sensitive tests pass whatever the day: rerun them with the wall clock moved to three awkward instants.

tests/wall_clock/sitecustomize.py moves the wall clock (time-machine) of the test process and of every
Python process it starts — the service included — so a test that reads the wall clock where it should fix
its own shows up here instead of failing one evening a week. (libfaketime was tried first: it also moves
the monotonic clock that thread waits use, which stalls APScheduler; time-machine leaves that alone.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
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


def _clock_env(instant: str) -> dict[str, str]:
    return {
        **os.environ,
        "MCP_WATCHER_TEST_WALL_CLOCK": instant,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SHIM), os.environ.get("PYTHONPATH")])),
    }


@pytest.mark.timeout(1800)  # three runs of about 250 s each, side by side, on a loaded machine
def test_the_date_sensitive_tests_pass_at_each_instant(tmp_path: Path) -> None:
    # One serial run of every date-sensitive module per instant, the three side by side: much of a run is
    # waiting on the services it starts, so together they take little more than the longest one alone.
    for instant in INSTANTS.values():
        probe = subprocess.run(
            [sys.executable, "-c", "import datetime; print(datetime.datetime.now(datetime.timezone.utc).isoformat())"],
            env=_clock_env(instant),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert probe.stdout.startswith(instant[:10]), f"the shim did not move the clock: {probe.stdout}{probe.stderr}"
    runs: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}
    try:
        for name, instant in INSTANTS.items():
            folder = tmp_path / name
            folder.mkdir()
            with open(folder / "output", "wb") as output:  # a file, not a pipe: no run waits on a full one
                runs[name] = (
                    subprocess.Popen(
                        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0"]
                        + ["--basetemp", str(folder / "temp")]
                        + DATE_SENSITIVE,
                        cwd=ROOT,
                        env=_clock_env(instant),
                        stdout=output,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,  # its own group, stopped as one below if it overruns
                    ),
                    folder / "output",
                )
        deadline = time.monotonic() + 1500  # a hung run fails here, stopped with its children
        for process, _ in runs.values():
            process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        for process, _ in runs.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    for name, (process, output) in runs.items():
        text = output.read_text(errors="replace").strip()
        summary = text.splitlines()[-1] if text else ""
        assert process.returncode == 0, f"at {INSTANTS[name]} ({name}): {summary}\n{text[-6000:]}"
        assert " passed" in summary and "failed" not in summary, f"{name}: {summary}"
