"""What a snapshot sends a server besides requests: HTTP headers, a stdio server's environment, profiles.

A profile NAME is the environment variable `MCP_WATCHER_PROFILE_<NAME>` (upper-cased, other characters
as `_`), one item per line:

    Authorization: Bearer …     an HTTP header (--url targets)
    env API_TOKEN=…             a variable for a stdio server (-- COMMAND targets)
    env TEAM_ID                 the same, its value taken from the watcher's own environment

Values never appear in an error message raised here: a malformed line may be all secret.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from watcher.core.errors import WatcherError

PROFILE_ENV_PREFIX = "MCP_WATCHER_PROFILE_"
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class UsageError(WatcherError):
    """Bad command-line input, phrased for the person who typed it."""


@dataclass(frozen=True)
class Profile:
    name: str
    variable: str
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    env: dict[str, str] = field(default_factory=dict, repr=False)


def profile_variable(profile: str) -> str:
    return PROFILE_ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", profile).upper()


def read_profile(profile: str, environ: Mapping[str, str]) -> Profile:
    variable = profile_variable(profile)
    raw = environ.get(variable)
    if raw is None:
        raise UsageError(
            f"profile {profile!r}: set {variable} to its items, one per line: "
            "'Name: value' for an HTTP header, 'env NAME=value' for a stdio server's variable"
        )
    headers: dict[str, str] = {}
    env: dict[str, str] = {}
    for number, line in enumerate(raw.splitlines(), 1):
        text = line.strip()
        if not text:
            continue
        where = f"{variable} line {number}"
        if text.startswith("env ") or text.startswith("env\t"):
            item = text[4:].strip()
            if "=" in item:
                env.update(parse_env_assignments([item], source=where))
            else:
                env.update(env_from_names([item], environ, source=where))
        else:
            headers.update(parse_headers([text], source=where))
    return Profile(profile, variable, headers, env)


def parse_headers(values: list[str], source: str = "--header") -> dict[str, str]:
    headers: dict[str, str] = {}
    for index, raw in enumerate(values, 1):
        name, sep, value = raw.partition(":")
        name = name.strip()
        if not sep or not _TOKEN.match(name):
            # Never echo the input: without a colon, the whole of it may be the token.
            label = source if source != "--header" else f"--header #{index}"
            raise UsageError(f"{label}: expected 'Name: value' with an HTTP token as the name")
        headers[name] = value.strip()
    return headers


def parse_env_assignments(values: list[str], source: str = "--env") -> dict[str, str]:
    """`NAME=VALUE` items → a mapping; the value may be empty and may hold `=`."""
    env: dict[str, str] = {}
    for index, raw in enumerate(values, 1):
        name, sep, value = raw.partition("=")
        if not sep or not ENV_NAME.match(name):
            label = source if source != "--env" else f"--env #{index}"
            raise UsageError(f"{label}: expected NAME=VALUE with NAME made of letters, digits and _")
        env[name] = value
    return env


def env_from_names(names: list[str], environ: Mapping[str, str], source: str = "--env-from") -> dict[str, str]:
    """Each named variable with its value from `environ`; an unset one is a usage error naming it."""
    env: dict[str, str] = {}
    for raw in names:
        name = raw.strip()
        if not ENV_NAME.match(name):
            raise UsageError(f"{source}: expected a variable name made of letters, digits and _")
        if name not in environ:
            raise UsageError(f"{source} {name}: {name} is not set in this environment")
        env[name] = environ[name]
    return env
