"""The service's one clock: a fixed start for rehearsals and tests, and a clear error for a bad value."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from tests.helpers import ROOT
from watcher.core import clock


def test_the_clock_starts_where_the_variable_says_and_runs_on(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(clock.START_VARIABLE, "2028-02-29T23:59:30Z")
    clock._offset.cache_clear()
    try:
        first = clock.now()
        assert abs(first - datetime(2028, 2, 29, 23, 59, 30, tzinfo=UTC)) < timedelta(seconds=5)
        assert clock.today().isoformat() in ("2028-02-29", "2028-03-01")
        assert clock.now() >= first, "the clock runs forward"
    finally:
        clock._offset.cache_clear()


def test_without_the_variable_the_clock_is_the_systems(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(clock.START_VARIABLE, raising=False)
    clock._offset.cache_clear()
    try:
        assert abs(clock.now() - datetime.now(UTC)) < timedelta(seconds=1)
    finally:
        clock._offset.cache_clear()


def test_a_bad_start_is_a_usage_error_naming_the_variable(tmp_path):
    config = tmp_path / "watcher.yaml"
    config.write_text(f"state: {tmp_path / 'state.db'}\nsdks: []\nteams: []\n")
    result = subprocess.run(
        [sys.executable, "-m", "watcher.cli", "--config", str(config), "status"],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), clock.START_VARIABLE: "next monday"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert "MCP_WATCHER_CLOCK_START='next monday': not an ISO date-time" in result.stderr
    assert "Traceback" not in result.stderr
