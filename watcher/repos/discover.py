"""The organisation's repositories that declare servers, through GitHub's REST API: one listing of the
organisation (paged), then, per repository (with the topic, if one is configured), whether it has the
team file. Every request is conditional (the ETags live in the store's HTTP cache), so a refresh where
nothing changed costs GitHub's primary limit nothing: a 304 does not count against it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from watcher.core.errors import SourceError
from watcher.core.store import Store
from watcher.repos.settings import GitHubDiscovery, TeamRepo
from watcher.repos.teamfile import FILE_NAME
from watcher.sources.base import FetchStats, HttpCache, RegistryHttp
from watcher.sources.settings import HttpSettings

PER_PAGE = 100


async def discover_github(
    settings: GitHubDiscovery,
    client: httpx.AsyncClient,
    cache: HttpCache,
    http: HttpSettings,
    environ: Mapping[str, str],
) -> tuple[list[TeamRepo], FetchStats]:
    """The repositories of `settings.org` that have the team file (and the topic); raises SourceError."""
    fetcher = RegistryHttp(client=client, cache=cache, settings=http)
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    token = environ.get(settings.token_env, "").strip() if settings.token_env else ""
    if token:
        headers["Authorization"] = f"Bearer {token}"
    api = settings.api_url.rstrip("/")
    listed: list[dict[str, Any]] = []
    page = 1
    while True:
        fetched = await fetcher.get(f"{api}/orgs/{settings.org}/repos?per_page={PER_PAGE}&page={page}", headers=headers)
        assert fetched is not None  # allow_404 is not set
        items = fetched.document()
        if not isinstance(items, list):
            raise SourceError(f"{fetched.url}: expected a list of repositories")
        listed.extend(item for item in items if isinstance(item, dict))
        if len(items) < PER_PAGE:
            break
        page += 1
    found = []
    for repo in listed:
        name, clone_url = repo.get("full_name"), repo.get("clone_url")
        if not isinstance(name, str) or not isinstance(clone_url, str) or repo.get("archived"):
            continue
        if settings.topic and settings.topic not in (repo.get("topics") or []):
            continue
        has_file = await fetcher.get(f"{api}/repos/{name}/contents/{FILE_NAME}", headers=headers, allow_404=True)
        if has_file is None:
            continue
        found.append(TeamRepo(git=clone_url, team=settings.team, token_env=settings.token_env))
    return found, fetcher.stats


_KV = "repos:discovered"


def discovered(store: Store) -> list[TeamRepo]:
    """The repositories the last successful discovery found (kept while GitHub cannot be read)."""
    stored = store.get_kv(_KV) or {}
    return [TeamRepo.model_validate(r) for r in stored.get("repos", [])]


def discovery_error(store: Store) -> str | None:
    return (store.get_kv(_KV) or {}).get("error")


def refresh_discovery(settings: GitHubDiscovery, http: HttpSettings, store: Store, environ: Mapping[str, str]) -> None:
    """Discover again; a failure is recorded (and shown by `status`) and the last list stays in use."""
    import asyncio

    async def run() -> tuple[list[TeamRepo], FetchStats]:
        async with httpx.AsyncClient(headers={"User-Agent": http.user_agent}) as client:
            return await discover_github(settings, client, store, http, environ)

    stored = store.get_kv(_KV) or {}
    try:
        repos, stats = asyncio.run(run())
    except SourceError as exc:
        store.set_kv(_KV, {**stored, "error": str(exc)})
        return
    store.set_kv(
        _KV,
        {
            "repos": [r.model_dump(mode="json") for r in repos],
            "error": None,
            "requests": stats.requests,
            "not_modified": stats.not_modified,
        },
    )
