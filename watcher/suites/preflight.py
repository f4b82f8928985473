"""A user's mistakes in `check` are found before anything is installed, and said as mistakes (exit 2).

A wrong server name, a server `path:` that is not there, an SDK version its registry does not have: none of
them is the SDK failing. The version is looked up in the state first (what polls saw), then in the
registry itself; a registry that cannot be read is no proof either way, so the check goes ahead, saying so.
"""

from __future__ import annotations

import asyncio

import httpx

from watcher.config import LoadedConfig
from watcher.core.errors import ConfigError
from watcher.core.store import Store
from watcher.polling.poll import SourceFetch, fetch_source
from watcher.sources.settings import HttpSettings
from watcher.sources.versions import parse, sort_key
from watcher.suites.settings import Server


class Mistake(Exception):
    """What the user asked for cannot be right; the message says what to do instead."""


def check_request(loaded: LoadedConfig, store: Store, server_name: str, version: str) -> list[str]:
    """Raise Mistake for a request that cannot be right; return warnings (what could not be confirmed)."""
    config = loaded.config
    try:
        server = config.server(server_name)
    except ConfigError as exc:
        raise Mistake(f"{exc} (in {loaded.path}); pass one of them to --server") from None
    _check_path(loaded, server)
    return _check_version(loaded, store, server, version)


def _check_path(loaded: LoadedConfig, server: Server) -> None:
    if server.path is None:
        return
    folder = loaded.resolve(server.path)
    if not folder.is_dir():
        raise Mistake(
            f"server {server.name!r}: its path {folder} is not a folder (servers[].path: {server.path!r} in "
            f"{loaded.path}, relative to that file's folder); correct `path:` to the server's project folder"
        )


def _check_version(loaded: LoadedConfig, store: Store, server: Server, version: str) -> list[str]:
    config = loaded.config
    source = config.sdk(server.sdk)
    if server.sdk_package and server.sdk_package != source.package:
        return []  # another package than the polled one: its registry listing is not ours to read
    if _same_version(source.registry, version, store.known_versions(source.name, source.package)):
        return []
    settings = config.http_client.model_copy(update={"retries": 0})  # one look, not a poll's patience
    fetched = asyncio.run(_fetch(store, loaded, source.name, settings))
    if fetched.releases is None:
        return [
            f"could not confirm that {source.package} {version} exists ({fetched.error}); trying to install it anyway"
        ]
    listed = [r.version for r in fetched.releases]
    if _same_version(source.registry, version, set(listed)):
        return []
    newest = sorted(listed, key=lambda v: sort_key(source.registry, v), reverse=True)[:5]
    raise Mistake(
        f"{source.registry} has no version {version} of {source.package} (newest: {', '.join(newest) or 'none'}); "
        f"pass one it has to --sdk-version (`mcp-watcher status` shows the newest seen)"
    )


async def _fetch(store: Store, loaded: LoadedConfig, sdk_name: str, settings: HttpSettings) -> SourceFetch:
    config = loaded.config.model_copy(update={"http_client": settings})
    source = config.sdk(sdk_name)
    async with httpx.AsyncClient(headers={"User-Agent": config.http_client.user_agent}, follow_redirects=True) as c:
        return await fetch_source(c, store, config, source)


def _same_version(registry: str, version: str, known: set[str]) -> bool:
    """`version` is among `known`, spelled alike or equal by the registry's scheme (2.4.0b1 = 2.4.0-beta.1)."""
    if version in known:
        return True
    wanted = parse(registry, version)
    return wanted.valid and any(parse(registry, other).key == wanted.key for other in known)
