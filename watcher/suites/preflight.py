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
from watcher.sources.versions import as_known, sort_key
from watcher.suites.settings import Server


class Mistake(Exception):
    """What the user asked for cannot be right; the message says what to do instead."""


def check_request(loaded: LoadedConfig, store: Store, server_name: str, version: str) -> list[str]:
    """Raise Mistake for a request that cannot be right; return warnings (what could not be confirmed)."""
    return checked_request(loaded, store, server_name, version)[1]


def checked_request(loaded: LoadedConfig, store: Store, server_name: str, version: str) -> tuple[str, list[str]]:
    """The version as the registry spells it (`2.2` → `2.2.0`), and the warnings; Mistake for a request that
    cannot be right."""
    config = loaded.config
    try:
        server = config.server(server_name)
    except ConfigError as exc:
        raise Mistake(f"{exc} (in {loaded.path}); pass one of them to --server") from None
    _check_path(loaded, server)
    return _check_version(loaded, store, server, version)


def known_spelling(loaded: LoadedConfig, store: Store, server: Server, version: str) -> str:
    """``version`` in the spelling of a version the polls saw of the server's SDK, when it is one (no request)."""
    source = next((s for s in loaded.config.sdks if s.name == server.sdk), None)
    if source is None:
        return version
    return as_known(source.registry, version, store.known_versions(source.name, source.package))


def _check_path(loaded: LoadedConfig, server: Server) -> None:
    if server.path is None:
        return
    folder = loaded.resolve(server.path)
    if not folder.is_dir():
        raise Mistake(
            f"server {server.name!r}: its path {folder} is not a folder (servers[].path: {server.path!r} in "
            f"{loaded.path}, relative to that file's folder); correct `path:` to the server's project folder"
        )


def _check_version(loaded: LoadedConfig, store: Store, server: Server, version: str) -> tuple[str, list[str]]:
    config = loaded.config
    source = config.sdk(server.sdk)
    if server.sdk_package and server.sdk_package != source.package:
        return version, []  # another package than the polled one: its registry listing is not ours to read
    seen = store.known_versions(source.name, source.package)
    spelled = as_known(source.registry, version, seen)
    if spelled in seen:
        return spelled, []
    settings = config.http_client.model_copy(update={"retries": 0})  # one look, not a poll's patience
    fetched = asyncio.run(_fetch(store, loaded, source.name, settings))
    if fetched.releases is None:
        return version, [
            f"could not confirm that {source.package} {version} exists ({fetched.error}); trying to install it anyway"
        ]
    listed = [r.version for r in fetched.releases]
    spelled = as_known(source.registry, version, listed)
    if spelled in listed:
        return spelled, []
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
