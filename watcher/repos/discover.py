"""The organisation's repositories that hold MCP servers, through GitHub's REST API, and who owns each.

One listing of the organisation (paged), then per repository its root folder's listing: a repository holds
servers when it has the configured topic, or (no topic configured) the team file, or a root manifest that
names an MCP SDK (that manifest read). Its owner is the watcher team the `owners` table gives for
the first owner its CODEOWNERS names, else for the first of its GitHub teams the table names, else
`discover.github.team`; a repository none of them maps is kept as *unowned*: listed on the status page and
told to the operators, never read and never silently dropped.

Every request is conditional (the ETags live in the store's HTTP cache), so a refresh where nothing changed
costs GitHub's primary limit nothing: a 304 does not count against it.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from fnmatch import fnmatch
from typing import TYPE_CHECKING, Any

import httpx

from watcher.core.errors import SourceError
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.notify import keys
from watcher.notify.blocks import escape, section
from watcher.repos.detect import MANIFEST_PATTERNS, ManifestError, detect
from watcher.repos.settings import GitHubDiscovery, TeamRepo
from watcher.repos.teamfile import FILE_NAME
from watcher.sources.base import FetchStats, HttpCache, RegistryHttp
from watcher.sources.settings import HttpSettings

if TYPE_CHECKING:
    from watcher.config import WatcherConfig

log = logging.getLogger(__name__)
PER_PAGE = 100
CODEOWNERS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
"""Where GitHub looks for a CODEOWNERS file, in its order."""
MANIFEST_READS = 2
"""Root manifests read per repository without the team file (the listing says which exist)."""


@dataclass(frozen=True)
class Unowned:
    """A repository discovery found that no rule gives an owner."""

    repository: str
    clone_url: str
    why: str


@dataclass(frozen=True)
class Discovered:
    repos: list[TeamRepo]
    unowned: list[Unowned]
    stats: FetchStats


class _GitHub:
    def __init__(self, settings: GitHubDiscovery, fetcher: RegistryHttp, environ: Mapping[str, str]) -> None:
        self.settings = settings
        self.fetcher = fetcher
        self.api = settings.api_url.rstrip("/")
        self.headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
        token = environ.get(settings.token_env, "").strip() if settings.token_env else ""
        if token:
            self.headers["Authorization"] = f"Bearer {token}"

    async def json(self, path: str, *, allow_404: bool = False) -> Any:
        fetched = await self.fetcher.get(f"{self.api}{path}", headers=self.headers, allow_404=allow_404)
        return None if fetched is None else fetched.document()

    async def listing(self, repo: str, folder: str) -> dict[str, str] | None:
        """A folder's entries, path → "file" or "dir" (None: no such folder, or an empty repository)."""
        items = await self.json(f"/repos/{repo}/contents/{folder}", allow_404=True)
        if not isinstance(items, list):
            return None
        return {str(i.get("path")): str(i.get("type")) for i in items if isinstance(i, dict) and i.get("path")}

    async def file(self, repo: str, path: str) -> str | None:
        """A file's text from the contents API (None: not there)."""
        item = await self.json(f"/repos/{repo}/contents/{path}", allow_404=True)
        if not isinstance(item, dict) or item.get("type") != "file":
            return None
        try:
            return base64.b64decode(str(item.get("content") or "")).decode("utf-8", errors="replace")
        except (binascii.Error, ValueError):
            return None


async def discover_github(
    settings: GitHubDiscovery,
    client: httpx.AsyncClient,
    cache: HttpCache,
    http: HttpSettings,
    environ: Mapping[str, str],
) -> Discovered:
    """The repositories of `settings.org` that hold MCP servers, each with its owner; raises SourceError."""
    github = _GitHub(settings, RegistryHttp(client=client, cache=cache, settings=http), environ)
    listed: list[dict[str, Any]] = []
    page = 1
    while True:
        items = await github.json(f"/orgs/{settings.org}/repos?per_page={PER_PAGE}&page={page}")
        if not isinstance(items, list):
            raise SourceError(f"{github.api}/orgs/{settings.org}/repos: expected a list of repositories")
        listed.extend(item for item in items if isinstance(item, dict))
        if len(items) < PER_PAGE:
            break
        page += 1
    found: list[TeamRepo] = []
    unowned: list[Unowned] = []
    for repo in listed:
        name, clone_url = repo.get("full_name"), repo.get("clone_url")
        if not isinstance(name, str) or not isinstance(clone_url, str) or repo.get("archived"):
            continue
        if settings.topic and settings.topic not in (repo.get("topics") or []):
            continue
        root = await github.listing(name, "")
        if root is None or not await _holds_servers(github, name, root):
            continue
        if len(found) + len(unowned) >= settings.max_repos:
            log.warning("discovery: more than %d repositories in %s; the rest are left out", settings.max_repos, name)
            break
        team, why = await _owner(github, name, root)
        if team is None:
            unowned.append(Unowned(name, clone_url, why))
            continue
        found.append(TeamRepo(git=clone_url, team=team, token_env=settings.token_env))
    return Discovered(found, unowned, github.fetcher.stats)


async def _holds_servers(github: _GitHub, name: str, root: dict[str, str]) -> bool:
    """With a topic configured, having it is enough; else the team file, or a root manifest that names an MCP
    SDK (at most `MANIFEST_READS` manifests read, in detection's order)."""
    if github.settings.topic or root.get(FILE_NAME) == "file":
        return True
    if not github.settings.manifests:
        return False
    files = sorted(path for path, kind in root.items() if kind == "file")
    manifests = [f for pattern in MANIFEST_PATTERNS for f in files if fnmatch(f, pattern)][:MANIFEST_READS]
    texts = {path: await github.file(name, path) for path in manifests}
    try:
        return detect(list(texts), texts.get, "") is not None
    except ManifestError:  # a manifest its parser refuses: not one that names an SDK, as far as can be told
        return False


async def _codeowners(github: _GitHub, name: str, root: dict[str, str]) -> tuple[str, str] | None:
    """(path, text) of the CODEOWNERS file GitHub would use, found through listings (no request that 404s)."""
    for path in CODEOWNERS:
        folder, _, file = path.rpartition("/")
        if folder:
            if root.get(folder) != "dir":
                continue
            inside = await github.listing(name, folder)
            if not inside or inside.get(path) != "file":
                continue
        elif root.get(file) != "file":
            continue
        text = await github.file(name, path)
        if text is not None:
            return path, text
    return None


async def _owner(github: _GitHub, name: str, root: dict[str, str]) -> tuple[str | None, str]:
    """(watcher team, "") for a mapped repository; (None, why) when no rule maps it."""
    settings = github.settings
    owners = {key.lower().lstrip("@"): team for key, team in settings.owners.items()}
    tried: list[str] = []
    codeowners = await _codeowners(github, name, root) if settings.codeowners else None
    if codeowners is not None:
        path, text = codeowners
        first = first_code_owner(text)
        if first is None:
            tried.append(f"{path} names no owner")
        else:
            key = first.lstrip("@").lower()
            for candidate in (key, key.split("/", 1)[-1]):
                if candidate in owners:
                    return owners[candidate], ""
            tried.append(f"{path}'s first owner {first} is not in discover.github.owners")
    if owners:
        try:
            teams = await github.json(f"/repos/{name}/teams?per_page={PER_PAGE}", allow_404=True) or []
        except SourceError as exc:  # a token that may not list teams: said, not fatal
            teams = []
            tried.append(f"its GitHub teams could not be read ({exc})")
        slugs = [str(t.get("slug")) for t in teams if isinstance(t, dict) and t.get("slug")]
        for slug in slugs:
            if slug.lower() in owners:
                return owners[slug.lower()], ""
        if slugs:
            tried.append(f"none of its GitHub teams ({', '.join(slugs)}) is in discover.github.owners")
    if settings.team is not None:
        return settings.team, ""
    return None, "; ".join(tried) or "no CODEOWNERS file and no GitHub team that discover.github.owners maps"


def first_code_owner(text: str) -> str | None:
    """The first owner of the first rule in a CODEOWNERS file (`@org/team`, `@user` or an e-mail address)."""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        words = line.split()
        if len(words) >= 2:
            return words[1]
    return None


_KV = "repos:discovered"


def discovered(store: Store) -> list[TeamRepo]:
    """The repositories the last successful discovery found (kept while GitHub cannot be read)."""
    stored = store.get_kv(_KV) or {}
    return [TeamRepo.model_validate(r) for r in stored.get("repos", [])]


def unowned(store: Store) -> list[Unowned]:
    """The repositories the last successful discovery found without an owner."""
    stored = store.get_kv(_KV) or {}
    known = Unowned.__dataclass_fields__
    return [Unowned(**{k: v for k, v in u.items() if k in known}) for u in stored.get("unowned", [])]


def queue_unowned_notices(config: WatcherConfig, store: Store) -> list[str]:
    """The operators told once per repository discovery found without an owner; returns the keys queued."""
    from watcher.spec.watch import operator_targets

    queued = []
    for repo in unowned(store):
        text = (
            f"mcp-watcher found {repo.repository} in the GitHub organisation but no rule says which team owns it, so "
            f"it is not read: {repo.why}. Map its CODEOWNERS owner or GitHub team in discover.github.owners."
        )
        for team, channel in operator_targets(config):
            key = keys.repo_unowned(repo.clone_url, channel)
            if store.enqueue(Notice(key, team, channel, "repo-unowned", escape(text), [section(escape(text))])):
                queued.append(key)
    return queued


def discovery_error(store: Store) -> str | None:
    return (store.get_kv(_KV) or {}).get("error")


def refresh_discovery(settings: GitHubDiscovery, http: HttpSettings, store: Store, environ: Mapping[str, str]) -> None:
    """Discover again; a failure is recorded (and shown by `status`) and the last list stays in use."""
    import asyncio

    async def run() -> Discovered:
        async with httpx.AsyncClient(headers={"User-Agent": http.user_agent}) as client:
            return await discover_github(settings, client, store, http, environ)

    stored = store.get_kv(_KV) or {}
    try:
        found = asyncio.run(run())
    except SourceError as exc:
        store.set_kv(_KV, {**stored, "error": str(exc)})
        return
    store.set_kv(
        _KV,
        {
            "repos": [r.model_dump(mode="json") for r in found.repos],
            "unowned": [asdict(u) for u in found.unowned],
            "error": None,
            "requests": found.stats.requests,
            "not_modified": found.stats.not_modified,
        },
    )
