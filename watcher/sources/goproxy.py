"""The Go module proxy protocol: ``@v/list``, ``@v/<version>.info`` and the latest ``.mod`` for retractions.

``GET <base>/<module>/@v/list`` lists tagged versions (pseudo-versions are not listed). Each
version's ``.info`` (``{"Version", "Time"}``) and ``.mod`` are immutable, so they are fetched once
and then served from the cache: an unchanged module costs one request.

Retractions: Go reads ``retract`` directives from the go.mod of the module's latest version (the
highest release, else the highest pre-release), so that one ``.mod`` is fetched (again once per
version) and retracted versions are marked yanked, with the rationale comment as note.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from datetime import datetime

from pydantic import Field

from watcher.core import schemes
from watcher.sources._parse import Model, get, ordered, parse_json, release, root, with_user_agent
from watcher.sources.base import RegistryHttp, RegistryInfo, Release, SourceError
from watcher.sources.settings import SdkSource

REGISTRY = RegistryInfo(name="goproxy", scheme=schemes.GO_MODULE, project_page="https://pkg.go.dev/{package}@{version}")


def default_base() -> str:
    return "https://proxy.golang.org"


def escape(path: str) -> str:
    """The proxy's case encoding: every upper-case letter becomes ``!`` + its lower-case form."""
    return re.sub(r"[A-Z]", lambda m: "!" + m[0].lower(), path)


class Info(Model):
    version: str = Field(alias="Version")
    time: datetime = Field(alias="Time")


@dataclass(frozen=True)
class Retraction:
    low: str
    high: str
    rationale: str | None

    def covers(self, version: str) -> bool:
        key = REGISTRY.scheme.sort_key(version)
        return REGISTRY.scheme.sort_key(self.low) <= key <= REGISTRY.scheme.sort_key(self.high)


async def fetch(http: RegistryHttp, source: SdkSource) -> list[Release]:
    module_url = f"{root(source, default_base)}/{escape(source.package)}/@v"
    listing = await get(http, f"{module_url}/list")
    listed = _parse_list(listing.text(), listing.url)
    if not listed:
        return []
    limit = asyncio.Semaphore(http.settings.concurrency)

    async def info(version: str) -> Info:
        async with limit:
            fetched = await get(http, f"{module_url}/{escape(version)}.info", immutable=True)
        return parse_json(fetched, Info)

    infos = await asyncio.gather(*(info(v) for v in listed))
    retractions = await _retractions(http, module_url, listed)
    releases = []
    for version, meta in zip(listed, infos, strict=True):
        hit = next((r for r in retractions if r.covers(version)), None)
        notes = [f"retracted: {hit.rationale}" if hit and hit.rationale else "retracted" if hit else None]
        releases.append(release(REGISTRY, version, meta.time, yanked=hit is not None, notes=notes))
    return ordered(REGISTRY, releases)


def _parse_list(text: str, url: str) -> list[str]:
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        version = line.strip()
        if not version:
            continue
        if not re.fullmatch(r"v[0-9A-Za-z.+-]+", version):
            raise SourceError(f"{url}: unexpected response: line {n} is not a module version: {version[:80]!r}")
        found.append(version)
    return list(dict.fromkeys(found))


def latest(listed: list[str]) -> str:
    """The version whose go.mod holds the module's retractions: highest release, else highest pre-release."""
    releases = [v for v in listed if not REGISTRY.scheme.is_prerelease(v)]
    return max(releases or listed, key=lambda v: REGISTRY.scheme.sort_key(v))


async def _retractions(http: RegistryHttp, module_url: str, listed: list[str]) -> list[Retraction]:
    newest = latest(listed)
    fetched = await http.get(
        f"{module_url}/{escape(newest)}.mod", headers=with_user_agent(http), immutable=True, allow_404=True
    )
    return [] if fetched is None else parse_retractions(fetched.text())


_VERSION = r"v[0-9A-Za-z.+-]+"
_SINGLE = re.compile(rf"^({_VERSION})\s*(?://\s*(.*))?$")
_RANGE = re.compile(rf"^\[\s*({_VERSION})\s*,\s*({_VERSION})\s*\]\s*(?://\s*(.*))?$")


def parse_retractions(gomod: str) -> list[Retraction]:
    """``retract`` directives of a go.mod: single versions and ``[low, high]`` ranges, alone or in a block.

    The rationale is the comment on the directive's line or the comment lines just above it.
    """
    found: list[Retraction] = []
    comments: list[str] = []
    in_block = False
    block_comments: list[str] = []
    for raw in gomod.splitlines():
        line = raw.strip()
        if line.startswith("//"):
            comments.append(line[2:].strip())
            continue
        if in_block:
            if line == ")":
                in_block = False
            elif line:
                _add(found, line, comments or block_comments)
            comments = []
            continue
        if line.startswith("retract"):
            rest = line[len("retract") :].strip()
            if rest.startswith("("):
                in_block = True
                block_comments = comments
            elif rest:
                _add(found, rest, comments)
        comments = []
    return found


def _add(found: list[Retraction], spec: str, comments: list[str]) -> None:
    above = " ".join(comments).strip() or None
    m = _RANGE.match(spec)
    if m:
        found.append(Retraction(m[1], m[2], (m[3] or "").strip() or above))
        return
    m = _SINGLE.match(spec)
    if m:
        found.append(Retraction(m[1], m[1], (m[2] or "").strip() or above))
