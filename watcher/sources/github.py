"""GitHub releases: ``GET <base>/repos/<owner>/<repo>/releases?per_page=100`` (newest first, paged).

``package`` is ``owner/repo``. Drafts are skipped; ``published_at`` is the release time; the tag
is the version, and the release's own ``prerelease`` flag counts as well as the tag's spelling.
Further pages are read while a page is full (up to ``MAX_PAGES``); when the first page answers 304
nothing was published or edited, so the cached later pages are reused without asking again.
A token from the GITHUB_TOKEN environment variable is sent when set (it raises the rate limit);
it never appears in errors or logs.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from watcher.core import schemes, vault
from watcher.sources._parse import Model, get, ordered, parse_json, release, root
from watcher.sources.base import RegistryHttp, RegistryInfo, Release, SourceError
from watcher.sources.settings import SdkSource

REGISTRY = RegistryInfo(
    name="github", scheme=schemes.GITHUB_TAG, project_page="https://github.com/{package}/releases/tag/{version}"
)
PER_PAGE = 100
MAX_PAGES = 10
TOKEN_ENV = "GITHUB_TOKEN"


def default_base() -> str:
    return "https://api.github.com"


class GithubRelease(Model):
    tag_name: str
    name: str | None = None
    draft: bool = False
    prerelease: bool = False
    published_at: datetime | None = None
    created_at: datetime | None = None
    html_url: str | None = None


def headers(token_env: str | None = TOKEN_ENV, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """GitHub API headers; the token from ``token_env`` when set (it raises the rate limit)."""
    env = vault.environ() if environ is None else environ
    result = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    token = (env.get(token_env) or "").strip() if token_env else ""
    if token:
        result["Authorization"] = f"Bearer {token}"
    return result


async def fetch(http: RegistryHttp, source: SdkSource) -> list[Release]:
    owner, sep, repo = source.package.partition("/")
    if not sep or not owner or not repo or "/" in repo:
        raise SourceError(f"github package {source.package!r}: expected owner/repo")
    url = f"{root(source, default_base)}/repos/{owner}/{repo}/releases?per_page={PER_PAGE}"
    first = await get(http, url, headers=headers())
    found = parse_json(first, list[GithubRelease])
    page_items = found
    page = 1
    while len(page_items) >= PER_PAGE and page < MAX_PAGES:
        page += 1
        fetched = await get(http, f"{url}&page={page}", headers=headers(), immutable=first.not_modified)
        page_items = parse_json(fetched, list[GithubRelease])
        found.extend(page_items)
    releases = {}
    for item in found:
        if item.draft or item.tag_name in releases:
            continue
        releases[item.tag_name] = release(
            REGISTRY, item.tag_name, item.published_at or item.created_at, registry_flag=item.prerelease
        )
    return ordered(REGISTRY, releases.values())
