"""The `teams` and `slack` sections, and the Slack credentials they name (read from the environment or a file)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from watcher.contract.settings import ContractSettings
from watcher.core import vault
from watcher.core.configfile import NAME_PATTERN, StrictModel
from watcher.core.errors import ConfigError


class Team(StrictModel):
    name: str = Field(pattern=NAME_PATTERN)
    slack_channel: str = Field(min_length=1)
    sdks: list[str] = Field(default_factory=list)
    servers: list[str] = Field(default_factory=list)
    notify_stable: bool = False
    include: list[str] = Field(default_factory=list)
    """Version globs (fnmatch) a notice must match, e.g. "2.*"; empty: every version."""
    exclude: list[str] = Field(default_factory=list)
    spec_news: bool = True
    digest: bool = True
    contract: ContractSettings = Field(default_factory=ContractSettings)
    slack_usergroup: str | None = Field(default=None, pattern=r"^S[A-Z0-9]+$")
    """A Slack user group id (S…) whose members may act on the team's servers from Slack, besides the
    members of its channel (watcher.slackapp)."""


class SlackSettings(StrictModel):
    token_env: str | None = "SLACK_BOT_TOKEN"
    token_file: str | None = None
    webhook_env: str | None = "SLACK_WEBHOOK_URL"
    webhook_file: str | None = None
    api_url: str | None = None
    """Web API base URL (tests, proxies); None: slack-sdk's default."""
    operators_channel: str | None = None
    """Where alerts for the service's operators go (e.g. the spec registry cannot be read)."""
    retries: int = Field(default=3, ge=0, le=10)
    timeout_seconds: float = Field(default=30, gt=0)
    max_retry_after_seconds: float = Field(default=10, ge=0)
    """A 429 asking for a longer wait is not waited for: the notice stays queued for the next pass."""
    app_token_env: str | None = "SLACK_APP_TOKEN"
    """The app-level token (xapp-…) for Socket Mode (watcher.slackapp)."""
    app_token_file: str | None = None
    signing_secret_env: str | None = "SLACK_SIGNING_SECRET"
    """The signing secret for interactivity over HTTP at POST /slack/events (watcher.slackapp)."""
    signing_secret_file: str | None = None


@dataclass(frozen=True)
class SlackCredentials:
    token: str | None = None
    webhook_url: str | None = None
    app_token: str | None = None
    """Socket Mode's app-level token (xapp-…)."""
    signing_secret: str | None = None
    """The secret Slack signs HTTP requests with."""

    @property
    def any(self) -> bool:
        return bool(self.token or self.webhook_url)

    @property
    def interactive(self) -> bool:
        """Buttons and the slash command work: a bot token and a way to hear Slack (Socket Mode or HTTP)."""
        return bool(self.token and (self.app_token or self.signing_secret))

    def __repr__(self) -> str:  # never print a secret, even by accident
        def shown(value: str | None) -> str | None:
            return "set" if value else None

        return (
            f"SlackCredentials(token={shown(self.token)}, webhook={shown(self.webhook_url)}, "
            f"app_token={shown(self.app_token)}, signing_secret={shown(self.signing_secret)})"
        )


def slack_credentials(settings: SlackSettings, environ: Mapping[str, str] | None = None) -> SlackCredentials:
    env = vault.environ() if environ is None else environ

    def read(env_name: str | None, file_name: str | None) -> str | None:
        if env_name and env.get(env_name):
            return env[env_name].strip()
        if file_name:
            try:
                return Path(file_name).read_text(encoding="utf-8").strip() or None
            except OSError as exc:
                raise ConfigError(f"{file_name}: cannot read the Slack secret file: {exc.strerror}") from exc
        return None

    return SlackCredentials(
        token=read(settings.token_env, settings.token_file),
        webhook_url=read(settings.webhook_env, settings.webhook_file),
        app_token=read(settings.app_token_env, settings.app_token_file),
        signing_secret=read(settings.signing_secret_env, settings.signing_secret_file),
    )
