"""An SDK's release history with publication times, read through the same adapter (and `url:`) as polling,
and the part of it a backtest replays: the versions published in the period, in publication order."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import httpx

from watcher.config import WatcherConfig
from watcher.core.errors import SourceError
from watcher.core.store import Store
from watcher.polling.poll import fetch_source
from watcher.sources.base import Release
from watcher.sources.settings import SdkSource
from watcher.sources.versions import is_ignored, sort_key

_LEADING = re.compile(r"^[vV]?(?P<major>\d+)(?:\.(?P<minor>\d+))?")


@dataclass(frozen=True)
class Replayed:
    """One version a backtest runs, as it appeared."""

    version: str
    published: datetime
    prerelease: bool
    yanked: bool
    line: str
    """The release line it belongs to: `2.x` (the major version), `0.9.x` below 1.0."""


@dataclass(frozen=True)
class Period:
    versions: list[Replayed]
    undated: list[str]
    """Versions the registry lists without a publication time: they cannot be placed in the period."""
    older_lines: list[str] = field(default_factory=list)
    """Versions of the period the server would not be offered (see `select`): not replayed."""


def read_history(config: WatcherConfig, store: Store, source: SdkSource) -> list[Release]:
    """Every version the registry lists for `source.package` (conditional requests through the store's cache);
    raises SourceError with the registry's reason when it cannot be read."""

    async def fetch() -> list[Release]:
        async with httpx.AsyncClient(
            headers={"User-Agent": config.http_client.user_agent}, follow_redirects=True
        ) as client:
            fetched = await fetch_source(client, store, config, source)
        if fetched.releases is None:
            raise SourceError(fetched.error or f"{source.registry}: no answer for {source.package}")
        return fetched.releases

    return asyncio.run(fetch())


def line_of(version: str) -> str:
    """`2.x` for 2.0.0a1 and 2.3.0; `0.9.x` for 0.9.0-preview.1 (below 1.0 every minor is a line). Every
    registry's scheme starts a version with its release numbers (Go's and tags' with a `v`)."""
    match = _LEADING.match(version.strip())
    if match is None:
        return version
    major, minor = int(match["major"]), match["minor"]
    if major == 0 and minor is not None:
        return f"0.{int(minor)}.x"
    return f"{major}.x"


def line_rank(version: str) -> tuple[int, ...] | None:
    """The line as numbers, to compare lines: (2,) for 2.x, (0, 9) for 0.9.x; None when unreadable."""
    match = _LEADING.match(version.strip())
    if match is None:
        return None
    major = int(match["major"])
    return (major, int(match["minor"])) if major == 0 and match["minor"] is not None else (major,)


def select(
    registry: str, releases: list[Release], since: date, until: date, *, on_line_of: str | None = None
) -> Period:
    """The versions published on `since` … `until` (both included), oldest first; ties by version.

    With `on_line_of` (the server's baseline SDK version), two kinds of version are left out and listed: those
    of older release lines, and late releases below it published after a higher version of their line (a
    backport such as 2.0.1 after 2.1.0, or a registry time out of order) — neither is an upgrade the server
    would be offered.
    """
    dated = sorted((r for r in releases if r.published is not None), key=lambda r: (r.published, r.version))
    undated = [r.version for r in releases if r.published is None and not is_ignored(registry, r.version)]
    chosen: list[Replayed] = []
    older: list[str] = []
    floor = line_rank(on_line_of) if on_line_of else None
    ceiling = sort_key(registry, on_line_of) if on_line_of else None
    highest: dict[str, tuple[Any, ...]] = {}
    for release in dated:
        if is_ignored(registry, release.version):
            continue
        assert release.published is not None
        line, key, rank = line_of(release.version), sort_key(registry, release.version), line_rank(release.version)
        backport = line in highest and key < highest[line] and ceiling is not None and key < ceiling
        highest[line] = max(highest.get(line, key), key)
        if not since <= release.published.date() <= until:
            continue
        if (floor is not None and rank is not None and rank < floor) or backport:
            older.append(release.version)
            continue
        chosen.append(Replayed(release.version, release.published, release.prerelease, release.yanked, line))
    return Period(chosen, undated, older)
