"""The `sdks` and `http_client` sections: which SDK packages are polled on which registry, and how."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from watcher.clusters.settings import ReleaseNotesSource
from watcher.core.configfile import NAME_PATTERN, StrictModel

Registry = Literal["pypi", "npm", "nuget", "goproxy", "crates", "maven", "rubygems", "packagist", "github"]


class SdkSource(StrictModel):
    name: str = Field(pattern=NAME_PATTERN)
    registry: Registry
    package: str = Field(min_length=1)
    url: str | None = None
    """Where the adapter reads the registry (its form per registry: watcher.sources.urls). None: the default."""
    language: str | None = None
    release_notes: ReleaseNotesSource | None = None
    """Where the SDK's release notes are (watcher/clusters/release_notes.py); None: not configured."""

    @field_validator("url")
    @classmethod
    def _url_form(cls, value: str | None, info: ValidationInfo) -> str | None:
        registry = info.data.get("registry")
        if value is None or registry is None:
            return value
        from watcher.sources.urls import url_problem  # late: the sources package imports this module

        problem = url_problem(registry, value)
        if problem:
            raise ValueError(problem)
        return value


class HttpSettings(StrictModel):
    timeout_seconds: float = Field(default=20, gt=0)
    retries: int = Field(default=3, ge=0, le=10)
    backoff_seconds: float = Field(default=0.5, ge=0)
    concurrency: int = Field(default=8, ge=1, le=64)
    user_agent: str = "mcp-watcher"
    request_deadline_seconds: float = Field(default=60, gt=0)
    """One request, from connect to the last byte (timeout_seconds applies to each read)."""
    poll_deadline_seconds: float = Field(default=300, gt=0)
    """One source's whole poll (every request and retry)."""
    max_response_bytes: int = Field(default=64 * 1024 * 1024, gt=0)
    """A larger answer is refused (and never cached)."""
    max_retry_after_seconds: float = Field(default=60, ge=0)
    """A registry's Retry-After longer than this is not waited for: the poll fails and the next one retries."""
