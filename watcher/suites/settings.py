"""The `servers`, `suites` and `conformance` sections: each team server, where its code comes from, how it is
built, started and judged, and where the suites run."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from watcher.contract.settings import ContractSettings
from watcher.core.configfile import ENV_NAME, NAME_PATTERN, StrictModel
from watcher.evaluation.settings import Evaluation


class ConformanceSettings(StrictModel):
    package: str = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
    npm_registry: str | None = None
    """None: npm's own configured registry."""


class Timeouts(StrictModel):
    install: float = Field(default=600, gt=0)
    start: float = Field(default=60, gt=0)
    suite: float = Field(default=600, gt=0)
    snapshot: float = Field(default=120, gt=0)


class GitSource(StrictModel):
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


class LocalExecutor(StrictModel):
    kind: Literal["local"] = "local"


class GitHubActionsExecutor(StrictModel):
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


class Server(StrictModel):
    name: str = Field(pattern=NAME_PATTERN)
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
            if not ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not a variable name (letters, digits and _)")
        if len(set(value)) != len(value):
            raise ValueError("a variable is named twice")
        return value

    @field_validator("env_files")
    @classmethod
    def _env_file_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, path in value.items():
            if not ENV_NAME.match(name):
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


DEFAULT_SHARED_WHEELS_MAX_MB = 2048
"""The shared wheel cache's total size unless `suites.shared_wheels_max_mb` says otherwise."""


class SuiteSettings(StrictModel):
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
    sandbox: Literal["auto", "bubblewrap", "none", "off"] = "auto"
    """Outside code (installs, builds, servers, the conformance suite) in bubblewrap rooms: auto and bubblewrap
    refuse it where bwrap cannot run; none (or its older spelling off) is the explicit opt-out."""
    egress: Literal["audit", "block"] = "block"
    """An install room's proxy and a request off its allow-list (the configured indexes and the file hosts they
    name): block refuses and records it; audit records it and lets it through."""
    shared_wheels: bool = True
    """Builds in a room take registry wheels from `<envs_dir>/_wheels` (hash-checked, read-only to rooms)."""
    shared_wheels_max_mb: int = Field(default=DEFAULT_SHARED_WHEELS_MAX_MB, ge=1)
    """The shared wheel cache's total size in MiB; after each harvest the oldest files go until it fits."""
