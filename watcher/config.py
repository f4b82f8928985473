"""The whole configuration: every capability's section (`watcher/<capability>/settings.py`) assembled into one
typed document, read by the loader in `watcher.core.configfile`. Errors name the file, line and key."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, model_validator

from watcher.clusters.settings import ClusterSettings
from watcher.core.configfile import (
    DEFAULT_CONFIG,
    LocatedError,
    StrictModel,
    config_path,
    validate_with_lines,
    yaml_with_lines,
)
from watcher.core.errors import ConfigError
from watcher.core.secret_policy import is_inline_secret_key
from watcher.core.settings import LogSettings
from watcher.core.state_check import StateError
from watcher.core.store import Store
from watcher.digest.settings import DigestSettings
from watcher.notify.settings import SlackSettings, Team
from watcher.polling.settings import Schedule
from watcher.repos.settings import Discovery, TeamRepo
from watcher.sources.settings import HttpSettings, SdkSource
from watcher.spec.settings import SpecSettings
from watcher.suites.settings import (
    ConformanceSettings,
    GitHubActionsExecutor,
    Server,
    SuiteSettings,
    git_protocol_refusal,
)
from watcher.web.settings import HttpEndpoint


class WatcherConfig(StrictModel):
    state: str = "state/watcher.db"
    sdks: list[SdkSource] = Field(default_factory=list)
    teams: list[Team] = Field(default_factory=list)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    schedule: Schedule = Field(default_factory=Schedule)
    http_client: HttpSettings = Field(default_factory=HttpSettings)
    spec: SpecSettings = Field(default_factory=SpecSettings)
    conformance: ConformanceSettings = Field(default_factory=ConformanceSettings)
    servers: list[Server] = Field(default_factory=list)
    suites: SuiteSettings = Field(default_factory=SuiteSettings)
    digest: DigestSettings = Field(default_factory=DigestSettings)
    http: HttpEndpoint = Field(default_factory=HttpEndpoint)
    log: LogSettings = Field(default_factory=LogSettings)
    repos: list[TeamRepo] = Field(default_factory=list)
    """Repositories that declare their servers in a team file (docs/configuration.md#the-team-file)."""
    discover: Discovery = Field(default_factory=Discovery)
    clusters: ClusterSettings = Field(default_factory=ClusterSettings)
    """Repositories found through GitHub's REST API, read like `repos` entries."""

    @model_validator(mode="after")
    def _cross_references(self) -> WatcherConfig:
        sdk_names = _unique([s.name for s in self.sdks], "sdks", "name")
        team_names = _unique([t.name for t in self.teams], "teams", "name")
        for i, repo in enumerate(self.repos):
            if repo.team not in team_names:
                raise LocatedError(("repos", i, "team"), f"unknown team {repo.team!r}; configured: {team_names}")
            problem = git_protocol_refusal(repo.git, self.suites.git_protocols)
            if problem:
                raise LocatedError(("repos", i, "git"), problem)
        github = self.discover.github
        if github and github.team is not None and github.team not in team_names:
            raise LocatedError(
                ("discover", "github", "team"), f"unknown team {github.team!r}; configured: {team_names}"
            )
        for slug, owner in (github.owners if github else {}).items():
            if owner not in team_names:
                raise LocatedError(
                    ("discover", "github", "owners", slug), f"unknown team {owner!r}; configured: {team_names}"
                )
        server_names = _unique([s.name for s in self.servers], "servers", "name")
        for i, team in enumerate(self.teams):
            for j, sdk in enumerate(team.sdks):
                if sdk not in sdk_names:
                    raise LocatedError(("teams", i, "sdks", j), f"unknown SDK {sdk!r}; configured: {sdk_names}")
            for j, server_name in enumerate(team.servers):
                if server_name not in server_names:
                    raise LocatedError(
                        ("teams", i, "servers", j), f"unknown server {server_name!r}; configured: {server_names}"
                    )
        for j, sdk in enumerate(self.schedule.window_sdks or []):
            if sdk not in sdk_names:
                raise LocatedError(("schedule", "window_sdks", j), f"unknown SDK {sdk!r}; configured: {sdk_names}")
        forbidden = secret_env_names(self)
        slack_files = {
            f
            for f in (
                self.slack.token_file,
                self.slack.webhook_file,
                self.slack.app_token_file,
                self.slack.signing_secret_file,
            )
            if f
        }
        secret_files = set(slack_files)
        for server in self.servers:
            executor_file = server.executor.token_file if isinstance(server.executor, GitHubActionsExecutor) else None
            secret_files |= {f for f in (server.token_file, executor_file) if f}
        for i, server in enumerate(self.servers):
            _check_granted_env(i, server, forbidden, secret_files, slack_files)
            if server.team not in team_names:
                raise LocatedError(("servers", i, "team"), f"unknown team {server.team!r}; configured: {team_names}")
            if server.sdk not in sdk_names:
                raise LocatedError(("servers", i, "sdk"), f"unknown SDK {server.sdk!r}; configured: {sdk_names}")
            if server.source is not None:
                problem = git_protocol_refusal(server.source.git, self.suites.git_protocols)
                if problem:
                    raise LocatedError(("servers", i, "source", "git"), problem)
        return self

    # Convenience lookups used across the service.
    def sdk(self, name: str) -> SdkSource:
        return next(s for s in self.sdks if s.name == name)

    def team(self, name: str) -> Team:
        return next(t for t in self.teams if t.name == name)

    def server(self, name: str) -> Server:
        for server in self.servers:
            if server.name == name:
                return server
        raise ConfigError(f"no server named {name!r}; configured: {[s.name for s in self.servers]}")

    def servers_of_team(self, team: str) -> list[Server]:
        listed = set(self.team(team).servers)
        return [s for s in self.servers if s.team == team or s.name in listed]


def _check_granted_env(
    index: int, server: Server, forbidden: set[str], secret_files: set[str], slack_files: set[str]
) -> None:
    """A server's env_from / env_files never name the watcher's own secrets (Slack, git, provider tokens)."""
    refusal = "is one of the watcher's own secret variables and never reaches a server under test"
    for j, name in enumerate(server.env_from):
        if name in forbidden:
            raise LocatedError(("servers", index, "env_from", j), f"{name} {refusal}")
        if name in server.env:
            raise LocatedError(("servers", index, "env_from", j), f"{name} is also set in env; name it once")
    for name, path in server.env_files.items():
        loc: tuple[str | int, ...] = ("servers", index, "env_files", name)
        if name in forbidden:
            raise LocatedError(loc, f"{name} {refusal}")
        if name in server.env or name in server.env_from:
            raise LocatedError(loc, f"{name} is also set in env or env_from; name it once")
        if path in secret_files:
            what = "Slack secret file" if path in slack_files else "git or GitHub token file"
            raise LocatedError(loc, f"this is the watcher's {what}; it never reaches a server under test")


def _unique(names: list[str], section: str, key: str) -> list[str]:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise LocatedError((section, i, key), f"duplicate name {name!r}; names must be unique")
        seen.add(name)
    return names


@dataclass(frozen=True)
class LoadedConfig:
    config: WatcherConfig
    path: Path
    base_dir: Path
    """Relative paths in the config (state, servers' paths) are resolved against this folder: the config
    file's own folder (docs/configuration.md § Paths)."""

    @property
    def loaded(self) -> LoadedConfig:
        """Itself: a fixed configuration reads like the service's live one (watcher.live.LiveConfig)."""
        return self

    def resolve(self, relative: str | os.PathLike[str]) -> Path:
        p = Path(relative)
        # normpath: the shipped config's `../state/watcher.db` reads as the checkout's state/ in messages.
        return p if p.is_absolute() else Path(os.path.normpath(self.base_dir / p))


def load_config(path: str | os.PathLike[str] | None = None, base_dir: Path | None = None) -> LoadedConfig:
    """Read and validate a config file. Relative paths in it resolve against its own folder by default
    (wherever the command was started); a path typed on the command line resolves against the caller's folder."""
    p = config_path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        hint = "; `mcp-watcher init` writes a first one here" if p == DEFAULT_CONFIG and not p.exists() else ""
        raise ConfigError(f"{p}: cannot read the config file: {exc.strerror or exc}{hint}") from exc
    config = parse_config(text, str(p))
    return LoadedConfig(config=config, path=p, base_dir=base_dir or p.resolve().parent)


def parse_config(text: str, filename: str = "<config>") -> WatcherConfig:
    data, lines = yaml_with_lines(text, filename)
    if not isinstance(data, dict):
        raise ConfigError(f"{filename}:1: expected a mapping of settings at the top level")
    _refuse_inline_secrets(data, filename, lines)
    return validate_with_lines(WatcherConfig, data, filename, lines)


def _refuse_inline_secrets(data: Mapping[str, object], filename: str, lines: dict[tuple[str | int, ...], int]) -> None:
    servers = data.get("servers")
    for i, server in enumerate(servers if isinstance(servers, list) else []):
        evaluation = server.get("evaluation") if isinstance(server, dict) else None
        for key in evaluation if isinstance(evaluation, dict) else ():
            if isinstance(key, str) and is_inline_secret_key(key):
                line = lines.get(("servers", i, "evaluation", key), 1)
                raise ConfigError(
                    f"{filename}:{line}: servers.{i}.evaluation.{key}: secrets are never read from the YAML; "
                    "name the environment variable that holds the API key (api_key_env)"
                )
    slack = data.get("slack")
    if isinstance(slack, dict):
        for key in slack:
            if isinstance(key, str) and is_inline_secret_key(key):
                line = lines.get(("slack", key), 1)
                raise ConfigError(
                    f"{filename}:{line}: slack.{key}: secrets are never read from the YAML; "
                    "name an environment variable (token_env / webhook_env) or a file (token_file / webhook_file)"
                )
    http = data.get("http")
    if isinstance(http, dict):
        for key in http:
            if isinstance(key, str) and is_inline_secret_key(key):
                line = lines.get(("http", key), 1)
                raise ConfigError(
                    f"{filename}:{line}: http.{key}: secrets are never read from the YAML; "
                    "name an environment variable (auth_token_env) or a file (auth_token_file)"
                )


def secret_env_names(config: WatcherConfig) -> set[str]:
    """Environment variables that hold the watcher's secrets: never passed to a server under test."""
    names = {
        n
        for n in (
            config.slack.token_env,
            config.slack.webhook_env,
            config.slack.app_token_env,
            config.slack.signing_secret_env,
            config.spec.github_token_env,
            config.http.auth_token_env,
        )
        if n
    }
    names |= {s.evaluation.key_env() for s in config.servers if s.evaluation is not None}
    names |= {r.token_env for r in config.repos if r.token_env}
    if config.discover.github and config.discover.github.token_env:
        names.add(config.discover.github.token_env)
    for server in config.servers:
        names |= {n for n in (server.token_env,) if n}
        if isinstance(server.executor, GitHubActionsExecutor) and server.executor.token_env:
            names.add(server.executor.token_env)
    return names | {"SLACK_BOT_TOKEN", "SLACK_WEBHOOK_URL", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"}


def own_secret_names(config: WatcherConfig | None) -> set[str]:
    """The watcher's own secret variables, taken out of its environment at start (`watcher.core.vault`).

    Not the servers' `env_from` variables: those are meant to reach their server (and only it)."""
    config = config or WatcherConfig()
    return secret_env_names(config) - granted_env_names(config)


def granted_env_names(config: WatcherConfig | None) -> set[str]:
    """Every variable some server is granted from the watcher's environment (`servers[].env_from`)."""
    return {name for server in (config.servers if config else []) for name in server.env_from}


def open_state(loaded: LoadedConfig) -> Store:
    """The state database the configuration names."""
    return Store(state_path(loaded))


def state_path(loaded: LoadedConfig) -> Path:
    """Where the state database is. Its folder must exist when `state:` is set (a typo in it would otherwise
    start an empty state that reports "no run yet"); the default's folder is created when it is opened."""
    path = loaded.resolve(loaded.config.state)
    if "state" in loaded.config.model_fields_set and not path.parent.exists():
        raise StateError(
            f"{path}: the folder {path.parent} does not exist (`state:` in {loaded.path}); "
            "create it (mkdir -p) or correct the path"
        )
    return path
