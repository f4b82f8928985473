"""The boundary a run's steps get, with what an install room's egress proxy needs from the configuration.

`boundary(config)` is `suites.sandbox`'s choice with `suites.egress` and the indexes the proxy allows besides the
installers' own settings (`watcher.boundary.egress`): pip's default index (its configuration, else the library's
constant), npm's registry (`npm config get registry`) and every SDK source's `url` from the config. `learn_urls`
names the pages the proxy reads (the SDK's, on each HTTPS index, before the installer's first tunnel there) for
the file hosts they name: pip's and uv's indexes are told by "/simple" in their URL, the rest are npm's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
from collections.abc import Sequence
from urllib.parse import quote

from packaging.utils import canonicalize_name

from watcher.boundary import egress, sandbox
from watcher.config import WatcherConfig
from watcher.core.errors import SourceError
from watcher.sources import npm, pypi


def boundary(config: WatcherConfig) -> sandbox.Sandbox:
    """The sandbox `suites.sandbox` asks for (as far as this machine allows), under `suites.egress`."""
    chosen = sandbox.choose(config.suites.sandbox)
    sources = tuple(source.url for source in config.sdks if source.url)
    return dataclasses.replace(
        chosen, egress=config.suites.egress, index_sources=functools.partial(default_indexes, sources)
    )


def with_sources(chosen: sandbox.Sandbox) -> sandbox.Sandbox:
    """`chosen`, naming the installers' default indexes when its chooser named none (a bare `sandbox.choose`)."""
    if chosen.index_sources is not tuple:
        return chosen
    return dataclasses.replace(chosen, index_sources=default_indexes)


def default_indexes(sources: Sequence[str] = ()) -> list[str]:
    """The installers' defaults and the SDK sources' URLs (npm's left out when npm cannot say)."""
    urls = [pypi.default_base(), *sources]
    with contextlib.suppress(SourceError):
        urls.append(npm.default_base())
    return urls


def learn_urls(language: str, package: str, env: dict[str, str], defaults: Sequence[str]) -> list[str]:
    """The SDK's page on each index its installer may use: PEP 503/691 project pages, or npm's packument."""
    urls = egress.index_urls({**os.environ, **env}, defaults=defaults)
    # Every kind, whatever the language: a declared build may install with either, and a page is read only when
    # the installer tunnels to its index anyway.
    simple = [f"{url.rstrip('/')}/{canonicalize_name(package)}/" for url in urls if "/simple" in url]
    return simple + [f"{url.rstrip('/')}/{quote(package, safe='@')}" for url in urls if "/simple" not in url]
