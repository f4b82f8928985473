"""crates.io through its web API: ``GET <base>/api/v1/crates/<name>`` (versions with ``yanked`` and ``created_at``).

crates.io refuses API clients without a User-Agent; every adapter request carries
``http_client.user_agent``.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from watcher.core import schemes
from watcher.sources._parse import Model, get, ordered, parse_json, release, root
from watcher.sources.base import RegistryHttp, RegistryInfo, Release
from watcher.sources.settings import SdkSource

REGISTRY = RegistryInfo(
    name="crates", scheme=schemes.SEMVER, project_page="https://crates.io/crates/{package}/{version}"
)


def default_base() -> str:
    return "https://crates.io"


class CrateVersion(Model):
    num: str
    yanked: bool = False
    created_at: datetime
    yank_message: str | None = None


class Crate(Model):
    name: str = Field(alias="name")


class CrateResponse(Model):
    crate: Crate
    versions: list[CrateVersion]


async def fetch(http: RegistryHttp, source: SdkSource) -> list[Release]:
    url = f"{root(source, default_base)}/api/v1/crates/{source.package}"
    document = parse_json(await get(http, url, headers={"Accept": "application/json"}), CrateResponse)
    releases = [
        release(
            REGISTRY,
            v.num,
            v.created_at,
            yanked=v.yanked,
            notes=[("yanked: " + v.yank_message) if v.yanked and v.yank_message else "yanked" if v.yanked else None],
        )
        for v in document.versions
    ]
    return ordered(REGISTRY, releases)
