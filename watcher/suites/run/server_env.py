"""The variables a configured server is granted: `servers[].env_from` and `servers[].env_files`, read at run time.

These are the only secrets that reach a server under test, and only the ones named for it. The config
already refuses a name that is one of the watcher's own secret variables; here a value is also refused
when it equals one of the watcher's secrets (a variable or file that merely copies the Slack token).
Errors name the key and the variable, never a value.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from watcher.config import LoadedConfig, secret_env_names
from watcher.core.errors import ConfigError
from watcher.notify.settings import slack_credentials
from watcher.suites.settings import Server


class ServerEnvError(ConfigError):
    """A granted variable cannot be provided; the server is not started."""


def granted_env(loaded: LoadedConfig, server: Server, environ: Mapping[str, str]) -> dict[str, str]:
    """Name → value for the server's env_from and env_files entries."""
    key = f"{loaded.path}: servers.{_index(loaded, server)}"
    granted: dict[str, str] = {}
    for j, name in enumerate(server.env_from):
        if name not in environ:
            raise ServerEnvError(
                f"{key}.env_from.{j}: {name} is not set in the watcher's environment (server {server.name!r})"
            )
        granted[name] = environ[name]
    for name, relative in server.env_files.items():
        path = loaded.resolve(relative)
        try:
            granted[name] = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            raise ServerEnvError(
                f"{key}.env_files.{name}: cannot read {path}: {reason} (server {server.name!r})"
            ) from exc
    watcher_secrets = _watcher_secret_values(loaded, environ)
    for name, value in granted.items():
        if value.strip() and value.strip() in watcher_secrets:
            source = "env_from" if name in server.env_from else "env_files"
            raise ServerEnvError(
                f"{key}.{source}: {name} holds the value of one of the watcher's own secrets; "
                f"it never reaches a server under test (server {server.name!r})"
            )
    return granted


def _index(loaded: LoadedConfig, server: Server) -> int:
    return next((i for i, s in enumerate(loaded.config.servers) if s.name == server.name), 0)


def _watcher_secret_values(loaded: LoadedConfig, environ: Mapping[str, str]) -> set[str]:
    config = loaded.config
    values = {environ[name].strip() for name in secret_env_names(config) if environ.get(name, "").strip()}
    with contextlib.suppress(ConfigError):  # an unreadable Slack file is reported where Slack is used
        credentials = slack_credentials(config.slack, dict(environ))
        values |= {v for v in (credentials.token, credentials.webhook_url) if v}
    return values
