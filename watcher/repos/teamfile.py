"""`.mcp-watcher.yaml`: a repository's own list of its servers — the keys of a central `servers[]` entry
minus what the platform owns (team, channel, source, tokens, variables granted from the watcher's
environment). Paths are relative to the repository; `path` is the server's folder in it. Left-out
`language`, `sdk`, `sdk_package` and `baseline_sdk_version` are filled from the manifests (watcher.repos.detect).

Errors are ConfigErrors naming the file (repository@commit:.mcp-watcher.yaml), line and key."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from pydantic import Field

from watcher.config import WatcherConfig
from watcher.core import untrusted
from watcher.core.configfile import LocatedError, StrictModel, validate_with_lines
from watcher.core.errors import ConfigError
from watcher.repos.detect import Detection, ManifestError, Read, detect
from watcher.repos.resolve import resolve
from watcher.suites.settings import Server

FILE_NAME = ".mcp-watcher.yaml"

PLATFORM_KEYS = {
    "team": "the platform's config names the team (repos[].team)",
    "channel": "the channel is the team's, in the platform's config",
    "slack_channel": "the channel is the team's, in the platform's config",
    "source": "the repository itself is the source",
    "token_env": "git tokens are the platform's (repos[].token_env)",
    "token_file": "git tokens are the platform's (repos[].token_env)",
    "env_from": "only the platform's config may pass the watcher's variables to a server",
    "env_files": "only the platform's config may pass secret files to a server",
}
NESTED_PLATFORM_KEYS = {
    ("executor", "token_env"): "the dispatching token is the platform's",
    ("executor", "token_file"): "the dispatching token is the platform's",
    ("executor", "api_url"): "the token is only sent where the platform's config says",
    ("evaluation", "api_key_env"): "the provider key is the platform's",
    ("evaluation", "api_url"): "the provider key is only sent where the platform's config says",
}
"""Keys that would let a team file send one of the watcher's secrets somewhere of its choosing."""
REPO_PATHS = ("accept", "expected_failures", "baseline_snapshot")
"""Files read from the checked-out repository: relative, inside it (never a file of the watcher's host)."""
DETECTED = ("language", "sdk", "sdk_package", "baseline_sdk_version")


_GITHUB = re.compile(
    r"^(?:https://github\.com/|ssh://git@github\.com/|git@github\.com:)([\w.-]+/[\w.-]+?)(?:\.git)?/?$"
)


def github_repository(git: str) -> str | None:
    """``owner/name`` of a repository on GitHub given by its clone address; None for any other host."""
    found = _GITHUB.match(git)
    return found.group(1) if found else None


class _TeamFile(StrictModel):
    servers: list[Server] = Field(min_length=1)


@dataclass(frozen=True)
class TeamServers:
    """What one commit of one repository declares."""

    commit: str
    servers: list[Server]
    lines: dict[str, int]
    """Server name → the line of its entry in the team file (for errors that name it)."""
    detections: dict[str, Detection | None]
    """Server name → what its manifests say (None: no manifest named an MCP SDK)."""
    overridden: dict[str, list[str]]
    """Server name → the detected keys the file sets itself."""
    resolved: dict[str, str] = field(default_factory=dict)
    """Server name → how a detected range became its baseline version (watcher.repos.resolve)."""


def parse_team_file(
    text: str,
    *,
    filename: str,
    git: str,
    commit: str,
    team: str,
    token_env: str | None = None,
    config: WatcherConfig,
    files: list[str],
    read: Read,
    known: Callable[[str], list[str]] | None = None,
) -> TeamServers:
    """Validate the team file's text at `commit` into central Server entries (source pinned to that commit).

    ``known``: the published versions the polls have seen of a platform SDK (by its name), which a detected
    range resolves against when the repository has no lock file for it."""
    data, lines = untrusted.yaml_document(
        text, filename, limits=untrusted.TEAM_FILE, expect=dict, shape="a mapping with a `servers` list"
    )
    unknown = [k for k in data if k != "servers"]
    if unknown:
        key = str(unknown[0])
        raise ConfigError(f"{filename}:{lines.get((key,), 1)}: {key}: unknown key (the team file has only `servers`)")
    entries = data.get("servers")
    if not isinstance(entries, list):
        raise ConfigError(f"{filename}:{lines.get(('servers',), 1)}: servers: expected a list of servers")
    filled: list[Any] = []
    detections: dict[str, Detection | None] = {}
    overridden: dict[str, list[str]] = {}
    where: dict[str, int] = {}
    resolutions: dict[str, str] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            filled.append(entry)  # the model names the wrong shape
            continue
        for key in entry:
            if key in PLATFORM_KEYS:
                line = lines.get(("servers", i, key), 1)
                raise ConfigError(f"{filename}:{line}: servers.{i}.{key}: not in a team file: {PLATFORM_KEYS[key]}")
        for (outer, inner), why in NESTED_PLATFORM_KEYS.items():
            if isinstance(entry.get(outer), dict) and inner in entry[outer]:
                line = lines.get(("servers", i, outer, inner), 1)
                raise ConfigError(f"{filename}:{line}: servers.{i}.{outer}.{inner}: not in a team file: {why}")
        executor = entry.get("executor")
        if isinstance(executor, dict) and "repo" in executor:
            own = github_repository(git)
            if own is None or str(executor["repo"]).lower() != own.lower():
                line = lines.get(("servers", i, "executor", "repo"), 1)
                raise ConfigError(
                    f"{filename}:{line}: servers.{i}.executor.repo: a team file may dispatch only to its own "
                    f"repository ({own or 'this repository is not on GitHub'}): the dispatch uses the platform's token"
                )
        paths: list[tuple[str, ...]] = [(key,) for key in REPO_PATHS] + [("evaluation", "tasks")]
        for where_in in paths:
            outer_value = entry.get(where_in[0])
            if len(where_in) == 1:
                value = outer_value
            else:
                value = outer_value.get(where_in[1]) if isinstance(outer_value, dict) else None
            if isinstance(value, str) and (value.startswith("/") or ".." in PurePosixPath(value).parts):
                line = lines.get(("servers", i, *where_in), 1)
                key = ".".join(where_in)
                raise ConfigError(
                    f"{filename}:{line}: servers.{i}.{key}: expected a path inside the repository (relative, no '..')"
                )
        entry = dict(entry)
        folder = str(entry.pop("path", "") or "")
        if folder.startswith("/") or ".." in PurePosixPath(folder).parts:
            line = lines.get(("servers", i, "path"), 1)
            raise ConfigError(f"{filename}:{line}: servers.{i}.path: expected a folder inside the repository")
        try:
            found = detect(files, read, folder)
        except ManifestError as exc:
            raise ConfigError(f"{filename}:{lines.get(('servers', i), 1)}: servers.{i}: {exc}") from exc
        name = str(entry.get("name", i))
        detections[name] = found
        overridden[name] = [k for k in DETECTED if k in entry]
        where[name] = lines.get(("servers", i), 1)
        if found:
            entry.setdefault("language", found.server_language)
            entry.setdefault("sdk_package", found.package)
            sdk = _sdk_for(config, found)
            resolved = resolve(found, folder, read, known(sdk) if known and sdk else [])
            if resolved and "baseline_sdk_version" not in entry:
                resolutions[name] = resolved.how
                entry["baseline_sdk_version"] = resolved.version
            elif found.version:
                entry.setdefault("baseline_sdk_version", found.version)
            if sdk:
                entry.setdefault("sdk", sdk)
        entry["team"] = team
        entry["source"] = {"git": git, "ref": commit, "subdir": folder.strip("/")}
        if token_env:
            entry["token_env"] = token_env
        filled.append(entry)
    parsed = validate_with_lines(_TeamFile, {"servers": filled}, filename, lines)
    sdk_names = [s.name for s in config.sdks]
    for i, server in enumerate(parsed.servers):
        if server.sdk not in sdk_names:
            loc = ("servers", i, "sdk")
            raise ConfigError(
                f"{filename}:{lines.get(loc, lines.get(('servers', i), 1))}: servers.{i}.sdk: "
                f"unknown SDK {server.sdk!r}; the platform's config has: {sdk_names}"
            )
    names = [s.name for s in parsed.servers]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(f"{filename}:{lines.get(('servers', i, 'name'), 1)}: servers.{i}.name: {name!r} twice")
    return TeamServers(commit, parsed.servers, where, detections, overridden, resolutions)


def _sdk_for(config: WatcherConfig, found: Detection) -> str | None:
    """The platform's SDK source for the detected package (one registry, one package)."""
    return next((s.name for s in config.sdks if s.registry == found.registry and s.package == found.package), None)


__all__ = ["FILE_NAME", "LocatedError", "TeamServers", "parse_team_file"]
