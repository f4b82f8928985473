"""The `clusters` section (when a failure shared by several teams is "likely the SDK") and the per-SDK
`release_notes` setting (where an SDK's release notes live)."""

from __future__ import annotations

import string

from pydantic import Field, field_validator

from watcher.core.configfile import StrictModel


class ReleaseNotesSource(StrictModel):
    """Where an SDK's release notes are: the GitHub releases of its repository, or a changelog file in the package."""

    repo: str | None = Field(default=None, pattern=r"^[\w.-]+/[\w.-]+$")
    """owner/name of the SDK's GitHub repository; its release tagged `tag` holds a version's notes."""
    tag: str = "v{version}"
    """The tag of a version's release, `{version}` replaced."""
    changelog: str | None = None
    """A changelog file inside the installed package (relative to its top folder), read instead of GitHub."""
    api_url: str | None = None
    """The GitHub REST API root; null: the spec watcher's (`spec.github_api_url`)."""
    token_env: str | None = "GITHUB_TOKEN"

    @field_validator("tag")
    @classmethod
    def _one_placeholder(cls, value: str) -> str:
        fields = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
        if fields != {"version"}:
            raise ValueError("expected a tag with {version} as its only placeholder, e.g. v{version}")
        return value


class ClusterSettings(StrictModel):
    threshold_teams: int = Field(default=3, ge=1)
    """A cluster spanning this many teams is "likely the SDK": each team in it is told once, operators get a report."""
    notes_versions: int = Field(default=10, ge=1, le=50)
    """At most this many versions' notes (the newest between the baseline and the beta) are read for a cluster."""
    notes_max_bytes: int = Field(default=512 * 1024, gt=0)
    """A release's notes larger than this are refused (a reported result, never a crash)."""
