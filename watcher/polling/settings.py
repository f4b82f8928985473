"""The `schedule` section: how often the service polls, delivers and reads the team repositories."""

from __future__ import annotations

from pydantic import Field

from watcher.core.configfile import StrictModel


class Schedule(StrictModel):
    poll_minutes: float = Field(default=30, gt=0)
    """The flat SDK poll interval, and the request budget calendar-aware polling keeps (watcher.polling.cadence)."""
    window_poll_minutes: float | None = Field(default=5, gt=0)
    """Inside a beta window the window SDKs are polled this often; None: calendar-aware polling off."""
    window_sdks: list[str] | None = None
    """The SDKs polled fast inside a beta window; None: the SDKs the configured servers are built on."""
    spec_poll_minutes: float = Field(default=360, gt=0)
    deliver_seconds: float = Field(default=30, gt=0)
    """How often the outbox is retried when Slack was unreachable."""
    source_alert_minutes: float = Field(default=360, gt=0)
    """A source failing this long without a break is one operator notice (and one when it recovers)."""
    repos_minutes: float = Field(default=30, gt=0)
    """How often the team repositories' `.mcp-watcher.yaml` files are read again (`repos`)."""
    config_seconds: float = Field(default=30, gt=0)
    """How often the service looks whether its central config file changed (a changed one is read again)."""
