"""The `repos` and `discover` sections: team repositories whose team file declares their servers."""

from __future__ import annotations

from pydantic import Field

from watcher.core.configfile import NAME_PATTERN, StrictModel


class TeamRepo(StrictModel):
    """A repository whose `.mcp-watcher.yaml` declares its team's servers (watcher.repos)."""

    git: str = Field(min_length=1)
    """A clone URL (https://…, ssh://…, file://…) or a local repository path."""
    team: str
    ref: str = "HEAD"
    """The branch, tag or commit the team file and the servers' code are read from; HEAD: the default branch."""
    token_env: str | None = None
    """A variable holding a token for git (private repositories); it reaches git only."""


class GitHubDiscovery(StrictModel):
    org: str = Field(pattern=NAME_PATTERN)
    team: str
    """The team that owns the repositories found (their notices go to its channel)."""
    topic: str | None = None
    """Only repositories with this topic (that also have the team file); None: every one that has it."""
    api_url: str = "https://api.github.com"
    token_env: str | None = "GITHUB_TOKEN"
    """The variable holding a token that may list the organisation's repositories and read their files."""


class Discovery(StrictModel):
    github: GitHubDiscovery | None = None
