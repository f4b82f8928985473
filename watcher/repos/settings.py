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
    team: str | None = None
    """The team that owns a repository no `owners` rule maps; None: such a repository is listed as unowned on the
    status page and told to the operators' channel (never read)."""
    owners: dict[str, str] = Field(default_factory=dict)
    """A GitHub team slug (or a user's login, as CODEOWNERS names it) → the watcher team that owns its repositories."""
    codeowners: bool = True
    """Map a repository by the first owner its CODEOWNERS file names, before asking GitHub for its teams."""
    topic: str | None = None
    """Only repositories with this topic (with or without the team file); None: those with the team file, and
    those whose root manifest names an MCP SDK (`manifests`)."""
    manifests: bool = True
    """Without a topic: also repositories without the team file whose root manifest names an MCP SDK."""
    max_repos: int = Field(default=500, ge=1)
    """At most this many repositories are taken from one discovery (the rest are said in the log)."""
    api_url: str = "https://api.github.com"
    token_env: str | None = "GITHUB_TOKEN"
    """The variable holding a token that may list the organisation's repositories and read their files."""


class Discovery(StrictModel):
    github: GitHubDiscovery | None = None
