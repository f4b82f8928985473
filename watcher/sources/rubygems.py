"""RubyGems through ``GET <base>/api/v1/versions/<gem>.json`` (number, created_at, prerelease, platform).

A version built for several platforms appears once per platform; it is one release here, dated by
its earliest build. RubyGems drops yanked versions from this list altogether, so they simply
disappear (a ``yanked`` field is honoured if a mirror sends one).
"""

from __future__ import annotations

from datetime import datetime

from watcher.core import schemes
from watcher.sources._parse import Model, get, ordered, parse_json, release, root
from watcher.sources.base import RegistryHttp, RegistryInfo, Release
from watcher.sources.settings import SdkSource

REGISTRY = RegistryInfo(
    name="rubygems", scheme=schemes.RUBYGEMS, project_page="https://rubygems.org/gems/{package}/versions/{version}"
)


def default_base() -> str:
    return "https://rubygems.org"


class GemVersion(Model):
    number: str
    created_at: datetime
    prerelease: bool = False
    platform: str = "ruby"
    yanked: bool = False


async def fetch(http: RegistryHttp, source: SdkSource) -> list[Release]:
    url = f"{root(source, default_base)}/api/v1/versions/{source.package}.json"
    builds = parse_json(await get(http, url, headers={"Accept": "application/json"}), list[GemVersion])
    by_number: dict[str, list[GemVersion]] = {}
    for build in builds:
        by_number.setdefault(build.number, []).append(build)
    releases = []
    for number, same in by_number.items():
        platforms = sorted({b.platform for b in same})
        releases.append(
            release(
                REGISTRY,
                number,
                min(b.created_at for b in same),
                registry_flag=any(b.prerelease for b in same),
                yanked=all(b.yanked for b in same),
                notes=["platforms: " + ", ".join(platforms)] if platforms != ["ruby"] else [],
            )
        )
    return ordered(REGISTRY, releases)
