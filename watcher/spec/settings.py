"""The `spec` section: where the deprecated-features registry and the spec revisions are read, and the release
calendar."""

from __future__ import annotations

from pydantic import Field, field_validator

from watcher.core.configfile import StrictModel


class Calendar(StrictModel):
    months: list[int] = Field(default_factory=lambda: [3, 9])
    weekday: int = Field(default=1, ge=0, le=6)
    """0 = Monday … 6 = Sunday; releases fall on the last such weekday of each month."""
    moved: dict[str, str] = Field(default_factory=lambda: {"2026-12": "2027-03"})
    """A planned release month (YYYY-MM) → the month it moved to, or "skip"."""
    beta_lead_days: int = Field(default=45, ge=0)
    effective_from: str | None = "2026-10-14"
    """The calendar applies from this date (SEP-3398's acceptance); no projections before it."""

    @field_validator("months")
    @classmethod
    def _months(cls, value: list[int]) -> list[int]:
        if not value or any(m < 1 or m > 12 for m in value):
            raise ValueError("expected a non-empty list of month numbers 1..12")
        return sorted(set(value))


class SpecSettings(StrictModel):
    registry_url: str = (
        "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/main/"
        "docs/specification/draft/deprecated.mdx"
    )
    repo: str = "modelcontextprotocol/modelcontextprotocol"
    github_api_url: str = "https://api.github.com"
    calendar: Calendar = Field(default_factory=Calendar)
    sep_final: dict[int, str] = Field(default_factory=lambda: {2596: "2026-06-03"})
    """SEP number → the date it reached Final (overrides the lookup)."""
    github_token_env: str | None = "GITHUB_TOKEN"
