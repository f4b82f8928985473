"""Packagist through Composer 2 metadata: ``GET <base>/p2/<vendor>/<package>.json`` (tagged releases only).

The file is "minified" (``"minified": "composer/2.0"``): the first version is complete and each
later one lists only the fields that changed, ``"__unset"`` removing one. It is expanded before
parsing. Branches live in the separate ``~dev`` file, which is not needed. A package marked
``abandoned`` counts as deprecated: its versions are flagged yanked with the replacement as note.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from watcher.core import schemes
from watcher.sources._parse import Model, get, ordered, release, root, validate
from watcher.sources.base import RegistryHttp, RegistryInfo, Release, SourceError
from watcher.sources.settings import SdkSource

REGISTRY = RegistryInfo(
    name="packagist", scheme=schemes.COMPOSER, project_page="https://packagist.org/packages/{package}#{version}"
)
UNSET = "__unset"


def default_base() -> str:
    return "https://repo.packagist.org"


class P2Document(Model):
    packages: dict[str, list[dict[str, Any]]]
    minified: str | None = None


class ComposerVersion(Model):
    version: str
    version_normalized: str | None = None
    time: datetime | None = None
    abandoned: bool | str = False


def expand(minified: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Composer's minified version list → complete version objects."""
    expanded: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for changes in minified:
        for key, value in changes.items():
            if value == UNSET:
                current.pop(key, None)
            else:
                current[key] = value
        expanded.append(dict(current))
    return expanded


async def fetch(http: RegistryHttp, source: SdkSource) -> list[Release]:
    name = source.package.lower()
    if name.count("/") != 1:
        raise SourceError(f"packagist package {source.package!r}: expected vendor/package")
    url = f"{root(source, default_base)}/p2/{name}.json"
    fetched = await get(http, url, headers={"Accept": "application/json"})
    document = validate(P2Document, fetched.document(), url)
    if name not in document.packages:
        raise SourceError(f"{url}: unexpected response: field packages.{name} is missing")
    raw = document.packages[name]
    if document.minified:
        if document.minified != "composer/2.0":
            raise SourceError(f"{url}: unexpected response: unknown minified format {document.minified!r}")
        raw = expand(raw)
    entries = validate(list[ComposerVersion], raw, f"{url} (packages.{name})")
    releases = []
    for entry in entries:
        notes = []
        if entry.abandoned:
            replacement = entry.abandoned if isinstance(entry.abandoned, str) else None
            notes.append(f"package abandoned; use {replacement} instead" if replacement else "package abandoned")
        releases.append(release(REGISTRY, entry.version, entry.time, yanked=bool(entry.abandoned), notes=notes))
    return ordered(REGISTRY, releases)
