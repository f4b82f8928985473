"""The foundation's own config section: `log` (kept apart from `logs`, which every command imports at start
without pydantic)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from watcher.core.configfile import StrictModel


class LogSettings(StrictModel):
    """The `log` section: the level and whether lines are JSON."""

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    json_format: bool = Field(default=False, alias="json")
