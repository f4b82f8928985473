"""NuGet through the package registration index (``registration5-gz-semver2``: includes SemVer 2 versions).

``GET <base>/registration5-gz-semver2/<lower-case id>/index.json``. Small packages have their pages
inlined; large ones list pages by URL, which are fetched too. The index names every page with its
commit id, so when the index answers 304 the cached pages are still current and are reused without
asking again: an unchanged package costs one request either way.

Unlisted versions (``listed: false``, or the legacy ``published`` of 1900-01-01) and deprecated ones
count as yanked; known vulnerabilities go in the note.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from pydantic import Field

from watcher.core import schemes
from watcher.sources._parse import Model, get, ordered, parse_json, release, root
from watcher.sources.base import RegistryHttp, RegistryInfo, Release, SourceError
from watcher.sources.settings import SdkSource

REGISTRY = RegistryInfo(
    name="nuget", scheme=schemes.NUGET, project_page="https://www.nuget.org/packages/{package}/{version}"
)
HIVE = "registration5-gz-semver2"


def default_base() -> str:
    return "https://api.nuget.org/v3"


class AlternatePackage(Model):
    id: str
    range: str | None = None


class Deprecation(Model):
    reasons: list[str] = Field(default_factory=list)
    message: str | None = None
    alternate_package: AlternatePackage | None = Field(default=None, alias="alternatePackage")


class Vulnerability(Model):
    advisory_url: str | None = Field(default=None, alias="advisoryUrl")
    severity: str | None = None


class CatalogEntry(Model):
    id: str
    version: str
    listed: bool | None = None
    published: datetime | None = None
    deprecation: Deprecation | None = None
    vulnerabilities: list[Vulnerability] | None = None


class Leaf(Model):
    catalog_entry: CatalogEntry = Field(alias="catalogEntry")


class Page(Model):
    id: str = Field(alias="@id")
    count: int
    items: list[Leaf] | None = None
    lower: str | None = None
    upper: str | None = None


class RegistrationIndex(Model):
    count: int
    items: list[Page]


async def fetch(http: RegistryHttp, source: SdkSource) -> list[Release]:
    url = f"{root(source, default_base)}/{HIVE}/{source.package.lower()}/index.json"
    fetched = await get(http, url)
    index = parse_json(fetched, RegistrationIndex)

    async def leaves(page: Page) -> list[Leaf]:
        if page.items is not None:
            return page.items
        if not page.id.startswith(("http://", "https://")):
            raise SourceError(f"{url}: unexpected response: field items.@id is not a page URL: {page.id[:80]!r}")
        page_doc = await get(http, page.id, immutable=fetched.not_modified)
        return parse_json(page_doc, Page).items or []

    pages = await asyncio.gather(*(leaves(page) for page in index.items))
    releases = [_release(leaf.catalog_entry) for items in pages for leaf in items]
    return ordered(REGISTRY, releases)


def _release(entry: CatalogEntry) -> Release:
    # nuget.org marks unlisted packages with this published date in older documents.
    legacy_unlisted = entry.published is not None and entry.published.year == 1900
    unlisted = entry.listed is False or legacy_unlisted
    notes = []
    if unlisted:
        notes.append("unlisted")
    if entry.deprecation is not None:
        reasons = ", ".join(entry.deprecation.reasons) or "deprecated"
        text = f"deprecated ({reasons})"
        if entry.deprecation.message:
            text += f": {entry.deprecation.message}"
        if entry.deprecation.alternate_package is not None:
            text += f"; use {entry.deprecation.alternate_package.id} instead"
        notes.append(text)
    if entry.vulnerabilities:
        notes.append(
            f"{len(entry.vulnerabilities)} known vulnerabilit{'y' if len(entry.vulnerabilities) == 1 else 'ies'}"
        )
    return release(
        REGISTRY,
        entry.version,
        None if legacy_unlisted else entry.published,
        yanked=unlisted or entry.deprecation is not None,
        notes=notes,
    )
