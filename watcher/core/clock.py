"""The service's one clock: every "now" and "today" in watcher/ comes from here.

``MCP_WATCHER_CLOCK_START`` (an ISO date-time, e.g. ``2026-12-02T12:00:00Z``) starts the clock at that
instant when the process starts; it then runs at normal speed. It exists so that a rehearsal ("what
would the service do next Monday?") and the tests that start the real service can fix the date they
rely on instead of depending on the day they happen to run. Unset, the clock is the system's.
"""

from __future__ import annotations

import functools
import os
from datetime import UTC, date, datetime, timedelta

START_VARIABLE = "MCP_WATCHER_CLOCK_START"


class ClockSettingError(ValueError):
    """``MCP_WATCHER_CLOCK_START`` is not an ISO date-time."""


@functools.cache
def _offset() -> timedelta:
    """Read once per process, on first use, so a bad value is reported by the command that reads it."""
    text = os.environ.get(START_VARIABLE, "").strip()
    if not text:
        return timedelta(0)
    try:
        start = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ClockSettingError(f"{START_VARIABLE}={text!r}: not an ISO date-time ({exc})") from exc
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    return start - datetime.now(UTC)


def now() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(UTC) + _offset()


def today() -> date:
    """Today's date in UTC."""
    return now().date()
