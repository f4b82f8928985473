"""The one way the watcher reads the clock and writes and reads moments: UTC, ISO 8601, seconds, `Z`."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import overload

from watcher.core import clock


def utcnow() -> datetime:
    """Now, from the service's one clock (watcher.core.clock)."""
    return clock.now()


def today_utc() -> date:
    return utcnow().date()


@overload
def iso(moment: datetime) -> str: ...
@overload
def iso(moment: None) -> None: ...
def iso(moment: datetime | None) -> str | None:
    """`2026-11-29T09:30:00Z`; a naive moment counts as UTC."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
