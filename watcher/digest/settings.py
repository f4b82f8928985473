"""The `digest` section: when the weekly deprecation digest is sent."""

from __future__ import annotations

from pydantic import Field

from watcher.core.configfile import StrictModel


class DigestSettings(StrictModel):
    day_of_week: str = "mon"
    hour: int = Field(default=9, ge=0, le=23)
    minute: int = Field(default=0, ge=0, le=59)
    timezone: str = "UTC"
    misfire_grace_hours: float = Field(default=72, gt=0)
