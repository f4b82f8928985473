"""YAML configuration → typed config. Errors name the file, line and key, and say what was expected."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from watcher import vault
from watcher.errors import ConfigError as ConfigError
from watcher.yaml_strict import DuplicateKeyError, UniqueKeyLoader

DEFAULT_CONFIG = Path("config/watcher.yaml")
CONFIG_ENV = "MCP_WATCHER_CONFIG"

Registry = Literal["pypi", "npm", "nuget", "goproxy", "crates", "maven", "rubygems", "packagist", "github"]
_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SdkSource(_Strict):
    name: str = Field(pattern=_NAME)
    registry: Registry
    package: str = Field(min_length=1)
    url: str | None = None
    """Where the adapter reads the registry (its form per registry: watcher.sources.urls). None: the default."""
    language: str | None = None

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


class ContractSettings(_Strict):
    levels: dict[str, Literal["breaking", "models", "info", "ignore"]] = Field(default_factory=dict)
    """Severity overrides: contract rule id → the grade its changes get (the original is kept beside)."""

    @field_validator("levels")
    @classmethod
    def _known_rules(cls, value: dict[str, str]) -> dict[str, str]:
        from watcher.contract.rules import RULES  # late: the config loads without the contract package

        unknown = sorted(rule for rule in value if rule not in RULES)
        if unknown:
            raise ValueError(f"unknown contract rule id(s) {', '.join(unknown)} (see docs/contract-rules.md)")
        return value


class Team(_Strict):
    name: str = Field(pattern=_NAME)
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


class SlackSettings(_Strict):
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


class Schedule(_Strict):
    poll_minutes: float = Field(default=30, gt=0)
    """The flat SDK poll interval, and the request budget calendar-aware polling keeps (watcher.cadence)."""
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


class HttpSettings(_Strict):
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


class Calendar(_Strict):
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


class SpecSettings(_Strict):
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


class ConformanceSettings(_Strict):
    package: str = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
    npm_registry: str | None = None
    """None: npm's own configured registry."""


class Timeouts(_Strict):
    install: float = Field(default=600, gt=0)
    start: float = Field(default=60, gt=0)
    suite: float = Field(default=600, gt=0)
    snapshot: float = Field(default=120, gt=0)


class EvaluationBudget(_Strict):
    max_trials: int | None = Field(default=None, ge=2)
    """Trials (model conversations, both versions together) one evaluation may run; None: no cap."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Input + output tokens (from the API's usage fields) one evaluation may spend; None: no cap."""


class EvaluationThresholds(_Strict):
    """What makes a task a regression (candidate against baseline, same tasks, same model)."""

    success_drop: float = Field(default=0.4, gt=0, le=1)
    """A drop of the task's success rate by at least this much (0.4 = 2 of 5 trials)."""
    tool_calls_ratio: float | None = Field(default=1.5, gt=1)
    """Mean tool calls per trial at least this many times the baseline's; None: not judged."""
    tokens_ratio: float | None = Field(default=1.5, gt=1)
    """Mean input + output tokens per trial at least this many times the baseline's; None: not judged."""
    tool_errors_increase: float | None = Field(default=0.5, gt=0)
    """Mean tool errors per trial up by at least this much; None: not judged."""
    no_tool_calls: bool = True
    """A task whose right behaviour is to call no tool, now calling one, is a regression."""
    alpha: float = Field(default=0.05, gt=0, lt=1)
    """Significance level of the overall paired test on success (exact McNemar, one-sided)."""


class Evaluation(_Strict):
    """The model-behaviour stage of one server: its task file and the model that runs it."""

    tasks: str
    """The task file, relative to the server's `path` (else to the config file's folder)."""
    provider: Literal["anthropic", "openai"] = "anthropic"
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    """The variable holding the provider's API key; None: ANTHROPIC_API_KEY / OPENAI_API_KEY."""
    api_url: str | None = None
    """Base URL of the provider's API (proxies, local model servers, tests); None: the SDK's default."""
    trials: int = Field(default=5, ge=1, le=100)
    max_steps: int = Field(default=6, ge=1, le=50)
    max_tokens: int = Field(default=1024, ge=1)
    """max_tokens of each model response."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_retries: int = Field(default=2, ge=0, le=10)
    """The provider SDK's own retries (429, 5xx, connection errors; it honours Retry-After)."""
    timeout_seconds: float = Field(default=120, gt=0)
    """One provider request, and one tool call against the server under test."""
    budget: EvaluationBudget = Field(default_factory=EvaluationBudget)
    thresholds: EvaluationThresholds = Field(default_factory=EvaluationThresholds)

    def key_env(self) -> str:
        return self.api_key_env or ("ANTHROPIC_API_KEY" if self.provider == "anthropic" else "OPENAI_API_KEY")


class GitSource(_Strict):
    git: str = Field(min_length=1)
    """A clone URL (https://…, ssh://…, file://…) or a local repository path."""
    ref: str = "HEAD"
    """A branch, tag or commit id; HEAD: the remote's default branch."""
    subdir: str = ""
    """The server's folder inside the repository ("": the repository's root)."""

    @field_validator("git", "ref")
    @classmethod
    def _not_an_option(cls, value: str) -> str:
        if value.startswith("-"):
            raise ValueError("must not start with '-' (git would read it as an option)")
        if any(c.isspace() or ord(c) < 32 for c in value.strip()) and "://" not in value:
            raise ValueError("must not hold spaces or control characters")
        return value

    @field_validator("subdir")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith("/") or ".." in Path(value).parts:
            raise ValueError("expected a folder inside the repository (relative, no '..')")
        return value


GitProtocol = Literal["https", "ssh", "http", "file"]
DEFAULT_GIT_PROTOCOLS: tuple[GitProtocol, ...] = ("https", "ssh")
_GIT_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")


def git_protocol(url: str) -> str | None:
    """The protocol git would use for ``url`` (a local path is ``file``); None for a form no list allows
    (git's ``transport::address`` remote helpers such as ``ext::``, unknown schemes)."""
    head = url.split("/", 1)[0]
    if "::" in head:
        return None
    if "://" in url:
        scheme = url.split("://", 1)[0].lower()
        scheme = {"git+ssh": "ssh", "ssh+git": "ssh"}.get(scheme, scheme)
        return scheme if scheme in ("https", "ssh", "http", "file", "git") else None
    if _GIT_SCP_LIKE.match(url):
        return "ssh"
    return "file"


def git_protocol_refusal(url: str, allowed: Sequence[str]) -> str | None:
    """Why ``url`` may not be fetched under ``suites.git_protocols``; None when it may."""
    if url.startswith("-"):
        return "must not start with '-' (git would read it as an option)"
    protocol = git_protocol(url)
    if protocol is None:
        return f"{url!r}: not a protocol git is allowed to use here (allowed: {', '.join(allowed)})"
    if protocol not in allowed:
        how = " (a local path is file)" if protocol == "file" and "://" not in url else ""
        return (
            f"protocol {protocol}{how} is not in suites.git_protocols ({', '.join(allowed)}); "
            f"add it there to fetch from {url!r}"
        )
    return None


class LocalExecutor(_Strict):
    kind: Literal["local"] = "local"


class GitHubActionsExecutor(_Strict):
    kind: Literal["github-actions"]
    repo: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    workflow: str = Field(min_length=1)
    """The workflow's file name (mcp-watcher.yml) or numeric id."""
    ref: str = "main"
    token_env: str | None = "GITHUB_TOKEN"
    token_file: str | None = None
    api_url: str = "https://api.github.com"
    web_url: str = "https://github.com"
    """Where the links in results point (GitHub Enterprise: your host)."""
    artifact: str = "mcp-watcher-report"
    """The name of the artifact holding report.json."""
    timeout_minutes: float = Field(default=60, gt=0)
    """From the dispatch to a completed run; longer is an error result."""
    find_seconds: float = Field(default=300, gt=0)
    """How long the dispatched run may take to appear in the runs list."""
    poll_seconds: float = Field(default=15, gt=0)
    lookup_seconds: float = Field(default=60, gt=0)
    """After a dispatch whose answer was lost: how long to look for its run before sending it again."""
    max_artifact_bytes: int = Field(default=64 * 1024 * 1024, gt=0)
    """The artifact zip as downloaded; a larger one is an error result and is not kept."""
    max_inflated_bytes: int = Field(default=256 * 1024 * 1024, gt=0)
    """What the zip's entries declare they inflate to, together."""
    max_report_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    """report.json inflated: checked against its declared size before reading and while reading."""


Executor = Annotated[LocalExecutor | GitHubActionsExecutor, Field(discriminator="kind")]


class Server(_Strict):
    name: str = Field(pattern=_NAME)
    team: str
    sdk: str
    language: Literal["python", "typescript", "other"]
    path: str | None = None
    source: GitSource | None = None
    """The server's code from git, fetched before each run (instead of path)."""
    token_env: str | None = None
    """A variable holding a token for source.git (private repositories); it reaches git only."""
    token_file: str | None = None
    transport: Literal["http", "stdio"] = "http"
    start: list[str] = Field(min_length=1)
    prepare: list[list[str]] = Field(default_factory=list)
    """language other: argument lists run in a copy of the tree ({version}, {package}, {workdir})."""
    executor: Executor = Field(default_factory=LocalExecutor)
    sdk_package: str | None = None
    """The package pinned to the new version; None: the SDK source's package."""
    baseline_sdk_version: str
    baseline_snapshot: str | None = None
    accept: str | None = None
    """The team's accept file for contract changes (YAML; see docs/suites.md), relative to the config's folder."""
    contract: ContractSettings = Field(default_factory=ContractSettings)
    """Severity overrides for this server, over its team's."""
    client_profiles: list[str] = Field(default_factory=lambda: ["typical", "none"], min_length=1)
    """The client-capability profiles its contract is snapshotted under (the first is the main one)."""
    requirements: list[str] = Field(default_factory=lambda: ["2026-07-28", "2025-11-25"])
    expected_failures: str | None = None
    timeouts: Timeouts = Field(default_factory=Timeouts)
    http_path: str = "/mcp"
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment for the server child (never secrets: those are scrubbed anyway)."""
    env_from: list[str] = Field(default_factory=list)
    """Variables the server needs, passed from the watcher's own environment (read at run time)."""
    env_files: dict[str, str] = Field(default_factory=dict)
    """Variable name → a file holding its value (read at run time; surrounding whitespace dropped)."""

    @field_validator("client_profiles")
    @classmethod
    def _known_profiles(cls, value: list[str]) -> list[str]:
        from watcher.contract.snapshot import distinct_profiles  # late: the config loads without the contract package

        distinct_profiles(value)
        return value

    @field_validator("env_from")
    @classmethod
    def _env_from_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not a variable name (letters, digits and _)")
        if len(set(value)) != len(value):
            raise ValueError("a variable is named twice")
        return value

    @field_validator("env_files")
    @classmethod
    def _env_file_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, path in value.items():
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not a variable name (letters, digits and _)")
            if not path.strip():
                raise ValueError(f"{name}: expected the path of a file holding the value")
        return value

    @field_validator("prepare")
    @classmethod
    def _prepare_steps(cls, value: list[list[str]]) -> list[list[str]]:
        for i, step in enumerate(value):
            if not step or not step[0].strip():
                raise ValueError(f"step {i + 1}: expected a non-empty argument list")
        return value

    @model_validator(mode="after")
    def _where_and_how(self) -> Server:
        if self.path is not None and self.source is not None:
            raise ValueError("give exactly one of path (a folder) or source (a git repository), not both")
        if self.path is None and self.source is None and self.executor.kind == "local":
            raise ValueError("give exactly one of path (a folder) or source (a git repository)")
        if (self.token_env or self.token_file) and self.source is None:
            raise ValueError("token_env / token_file are for source.git; this server has no source")
        if self.prepare and self.language != "other":
            raise ValueError("prepare steps are for language: other (python and typescript are built by the watcher)")
        return self

    def granted_names(self) -> list[str]:
        """Variables named for this server whose values are secrets of its own (env_from, env_files)."""
        return [*self.env_from, *self.env_files]

    evaluation: Evaluation | None = None
    """The model-behaviour stage; None: no evaluation set declared."""


class SuiteSettings(_Strict):
    concurrency: int = Field(default=1, ge=1, le=8)
    runs_dir: str = "state/runs"
    envs_dir: str = "state/envs"
    git_cache_dir: str = "state/git"
    """One shallow cache clone per source repository."""
    git_protocols: list[GitProtocol] = Field(default_factory=lambda: list(DEFAULT_GIT_PROTOCOLS))
    """The protocols a `source.git` may use (git's own GIT_ALLOW_PROTOCOL too); `file` covers local paths."""
    keep_runs: int = Field(default=20, ge=1)
    """Artifacts kept per server; older run folders are deleted."""
    on_stable: bool = False
    """Also run the suites for new stable releases, not only pre-releases."""
    on_baseline: bool = True
    """When an SDK is first seen (baseline), run its servers once against its newest version."""
    sandbox: Literal["auto", "bubblewrap", "off"] = "auto"
    """The server under test inside bubblewrap: auto (when bwrap works here), bubblewrap (required), off."""
    shared_wheels: bool = True
    """Builds in a room take registry wheels from `<envs_dir>/_wheels` (hash-checked, read-only to rooms)."""


class DigestSettings(_Strict):
    day_of_week: str = "mon"
    hour: int = Field(default=9, ge=0, le=23)
    minute: int = Field(default=0, ge=0, le=59)
    timezone: str = "UTC"
    misfire_grace_hours: float = Field(default=72, gt=0)


class HttpEndpoint(_Strict):
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    enabled: bool = True
    auth_token_env: str | None = "MCP_WATCHER_PAGE_TOKEN"
    """Where the status pages' token is read from on a non-loopback host (never from the YAML)."""
    auth_token_file: str | None = None
    public: bool = False
    """True: serve the status pages on a non-loopback host without a token (a deliberate choice)."""
    metrics_need_token: bool = False
    """True: /metrics asks for the token too where the pages do (/healthz and /readyz never do)."""
    public_url: str | None = Field(default=None, pattern=r"^https?://")
    """Where people reach the pages (e.g. https://watcher.example.org): Slack buttons link there."""


class LogSettings(_Strict):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    json_format: bool = Field(default=False, alias="json")


class TeamRepo(_Strict):
    """A repository whose `.mcp-watcher.yaml` declares its team's servers (watcher.repos)."""

    git: str = Field(min_length=1)
    """A clone URL (https://…, ssh://…, file://…) or a local repository path."""
    team: str
    ref: str = "HEAD"
    """The branch, tag or commit the team file and the servers' code are read from; HEAD: the default branch."""
    token_env: str | None = None
    """A variable holding a token for git (private repositories); it reaches git only."""


class GitHubDiscovery(_Strict):
    org: str = Field(pattern=_NAME)
    team: str
    """The team that owns the repositories found (their notices go to its channel)."""
    topic: str | None = None
    """Only repositories with this topic (that also have the team file); None: every one that has it."""
    api_url: str = "https://api.github.com"
    token_env: str | None = "GITHUB_TOKEN"
    """The variable holding a token that may list the organisation's repositories and read their files."""


class Discovery(_Strict):
    github: GitHubDiscovery | None = None


class WatcherConfig(_Strict):
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
    """Repositories found through GitHub's REST API, read like `repos` entries."""

    @model_validator(mode="after")
    def _cross_references(self) -> WatcherConfig:
        sdk_names = _unique([s.name for s in self.sdks], "sdks", "name")
        team_names = _unique([t.name for t in self.teams], "teams", "name")
        for i, repo in enumerate(self.repos):
            if repo.team not in team_names:
                raise _RefError(("repos", i, "team"), f"unknown team {repo.team!r}; configured: {team_names}")
            problem = git_protocol_refusal(repo.git, self.suites.git_protocols)
            if problem:
                raise _RefError(("repos", i, "git"), problem)
        if self.discover.github and self.discover.github.team not in team_names:
            raise _RefError(
                ("discover", "github", "team"), f"unknown team {self.discover.github.team!r}; configured: {team_names}"
            )
        server_names = _unique([s.name for s in self.servers], "servers", "name")
        for i, team in enumerate(self.teams):
            for j, sdk in enumerate(team.sdks):
                if sdk not in sdk_names:
                    raise _RefError(("teams", i, "sdks", j), f"unknown SDK {sdk!r}; configured: {sdk_names}")
            for j, server_name in enumerate(team.servers):
                if server_name not in server_names:
                    raise _RefError(
                        ("teams", i, "servers", j), f"unknown server {server_name!r}; configured: {server_names}"
                    )
        for j, sdk in enumerate(self.schedule.window_sdks or []):
            if sdk not in sdk_names:
                raise _RefError(("schedule", "window_sdks", j), f"unknown SDK {sdk!r}; configured: {sdk_names}")
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
                raise _RefError(("servers", i, "team"), f"unknown team {server.team!r}; configured: {team_names}")
            if server.sdk not in sdk_names:
                raise _RefError(("servers", i, "sdk"), f"unknown SDK {server.sdk!r}; configured: {sdk_names}")
            if server.source is not None:
                problem = git_protocol_refusal(server.source.git, self.suites.git_protocols)
                if problem:
                    raise _RefError(("servers", i, "source", "git"), problem)
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


class _RefError(ValueError):
    """A cross-reference error that knows where in the document it points."""

    def __init__(self, loc: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc


def _check_granted_env(
    index: int, server: Server, forbidden: set[str], secret_files: set[str], slack_files: set[str]
) -> None:
    """A server's env_from / env_files never name the watcher's own secrets (Slack, git, provider tokens)."""
    refusal = "is one of the watcher's own secret variables and never reaches a server under test"
    for j, name in enumerate(server.env_from):
        if name in forbidden:
            raise _RefError(("servers", index, "env_from", j), f"{name} {refusal}")
        if name in server.env:
            raise _RefError(("servers", index, "env_from", j), f"{name} is also set in env; name it once")
    for name, path in server.env_files.items():
        loc: tuple[str | int, ...] = ("servers", index, "env_files", name)
        if name in forbidden:
            raise _RefError(loc, f"{name} {refusal}")
        if name in server.env or name in server.env_from:
            raise _RefError(loc, f"{name} is also set in env or env_from; name it once")
        if path in secret_files:
            what = "Slack secret file" if path in slack_files else "git or GitHub token file"
            raise _RefError(loc, f"this is the watcher's {what}; it never reaches a server under test")


LocatedError = _RefError
"""Raise from a validator to point the error at another place of the document (other YAML files use it)."""


def _unique(names: list[str], section: str, key: str) -> list[str]:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise _RefError((section, i, key), f"duplicate name {name!r}; names must be unique")
        seen.add(name)
    return names


# --- loading with line numbers -------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedConfig:
    config: WatcherConfig
    path: Path
    base_dir: Path
    """Relative paths in the config (state, servers' paths) are resolved against this folder: the config
    file's own folder (docs/configuration.md § Paths)."""

    def resolve(self, relative: str | os.PathLike[str]) -> Path:
        p = Path(relative)
        # normpath: the shipped config's `../state/watcher.db` reads as the checkout's state/ in messages.
        return p if p.is_absolute() else Path(os.path.normpath(self.base_dir / p))


def config_path(explicit: str | os.PathLike[str] | None) -> Path:
    if explicit:
        return Path(explicit)
    env = os.environ.get(CONFIG_ENV)
    return Path(env) if env else DEFAULT_CONFIG


def load_config(path: str | os.PathLike[str] | None = None, base_dir: Path | None = None) -> LoadedConfig:
    """Read and validate a config file. Relative paths in it resolve against its own folder by default
    (wherever the command was started); a path typed on the command line resolves against the caller's folder."""
    p = config_path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the config file: {exc.strerror or exc}") from exc
    config = parse_config(text, str(p))
    return LoadedConfig(config=config, path=p, base_dir=base_dir or p.resolve().parent)


def parse_config(text: str, filename: str = "<config>") -> WatcherConfig:
    data, lines = yaml_with_lines(text, filename)
    if not isinstance(data, dict):
        raise ConfigError(f"{filename}:1: expected a mapping of settings at the top level")
    _refuse_inline_secrets(data, filename, lines)
    return validate_with_lines(WatcherConfig, data, filename, lines)


Lines = dict[tuple[str | int, ...], int]
_M = TypeVar("_M", bound=BaseModel)


def yaml_with_lines(text: str, filename: str) -> tuple[Any, Lines]:
    """The YAML document and the line of every key and item in it (for errors that name a line)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{filename}:{mark.line + 1}" if mark else filename
        raise ConfigError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from exc
    if node is None:
        return {}, {}
    lines: Lines = {}
    _index_lines(node, (), lines)
    _check_dates(node, (), filename)
    try:
        data = yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)
    except DuplicateKeyError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 1
        raise ConfigError(f"{filename}:{line}: {exc.problem}") from exc
    return data, lines


def _check_dates(node: yaml.Node, loc: tuple[str | int, ...], filename: str) -> None:
    """A date-shaped value that is no date (2027-13-01) fails in the YAML library without a line: name it."""
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:timestamp":
        try:
            yaml.SafeLoader("").construct_yaml_timestamp(node)
        except ValueError as exc:
            key = ".".join(str(part) for part in loc)
            line = node.start_mark.line + 1
            raise ConfigError(f"{filename}:{line}: {key}: {node.value!r} is not a valid date: {exc}") from exc
    elif isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            _check_dates(value_node, (*loc, key_node.value), filename)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _check_dates(item, (*loc, index), filename)


def validate_with_lines(model: type[_M], data: Any, filename: str, lines: Lines) -> _M:
    """Validate `data` as `model`; a ConfigError names file, line and key of every problem."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, filename, lines)) from exc


_SECRET_KEYS = re.compile(r"^(token|bot_token|webhook|webhook_url|secret|password)$")


def _refuse_inline_secrets(data: dict[str, Any], filename: str, lines: dict[tuple[str | int, ...], int]) -> None:
    servers = data.get("servers")
    for i, server in enumerate(servers if isinstance(servers, list) else []):
        evaluation = server.get("evaluation") if isinstance(server, dict) else None
        for key in evaluation if isinstance(evaluation, dict) else ():
            if isinstance(key, str) and (_SECRET_KEYS.match(key) or key == "api_key"):
                line = lines.get(("servers", i, "evaluation", key), 1)
                raise ConfigError(
                    f"{filename}:{line}: servers.{i}.evaluation.{key}: secrets are never read from the YAML; "
                    "name the environment variable that holds the API key (api_key_env)"
                )
    slack = data.get("slack")
    if isinstance(slack, dict):
        for key in slack:
            if isinstance(key, str) and _SECRET_KEYS.match(key):
                line = lines.get(("slack", key), 1)
                raise ConfigError(
                    f"{filename}:{line}: slack.{key}: secrets are never read from the YAML; "
                    "name an environment variable (token_env / webhook_env) or a file (token_file / webhook_file)"
                )
    http = data.get("http")
    if isinstance(http, dict):
        for key in http:
            if isinstance(key, str) and (_SECRET_KEYS.match(key) or key == "auth_token"):
                line = lines.get(("http", key), 1)
                raise ConfigError(
                    f"{filename}:{line}: http.{key}: secrets are never read from the YAML; "
                    "name an environment variable (auth_token_env) or a file (auth_token_file)"
                )


def _index_lines(node: yaml.Node, loc: tuple[str | int, ...], out: dict[tuple[str | int, ...], int]) -> None:
    out[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            out[(*loc, key)] = key_node.start_mark.line + 1
            _index_lines(value_node, (*loc, key), out)
            out[(*loc, key)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, (*loc, i), out)


def _describe(exc: ValidationError, filename: str, lines: dict[tuple[str | int, ...], int]) -> str:
    messages = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        ctx_error = (error.get("ctx") or {}).get("error")
        if isinstance(ctx_error, _RefError):
            loc = ctx_error.loc
            what = str(ctx_error)
        elif error["type"] == "extra_forbidden":
            what = "unknown key (check the spelling; every key is in docs/configuration.md)"
        elif error["type"] == "missing":
            what = "required key is missing"
        else:
            what = f"{error['msg']} (got {error.get('input')!r})"
        line = _nearest_line(loc, lines)
        key = ".".join(str(part) for part in loc) or "(top level)"
        messages.append(f"{filename}:{line}: {key}: {what}")
    return "\n".join(messages)


def _nearest_line(loc: tuple[str | int, ...], lines: dict[tuple[str | int, ...], int]) -> int:
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in lines:
            return lines[loc[:cut]]
    return 1


# --- secrets ---------------------------------------------------------------------------------------


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
    """The watcher's own secret variables, taken out of its environment at start (`watcher.vault`).

    Not the servers' `env_from` variables: those are meant to reach their server (and only it)."""
    config = config or WatcherConfig()
    return secret_env_names(config) - granted_env_names(config)


def granted_env_names(config: WatcherConfig | None) -> set[str]:
    """Every variable some server is granted from the watcher's environment (`servers[].env_from`)."""
    return {name for server in (config.servers if config else []) for name in server.env_from}
