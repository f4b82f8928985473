"""The SDK's own release notes for the versions between a cluster's baseline and its beta, and the lines in
them that name the cluster's failing symbols. Each version's notes are fetched once (stored per version; the
HTTP cache makes any later ask conditional), bounded in size, through the registries' HTTP client; a version
whose notes cannot be read is said as such. Where they live is per SDK: `sdks[].release_notes`."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from watcher.clusters.settings import ReleaseNotesSource
from watcher.config import LoadedConfig
from watcher.core import untrusted
from watcher.core.errors import SourceError, UntrustedInputError
from watcher.core.store import Store
from watcher.sources import versions
from watcher.sources.base import RegistryHttp
from watcher.sources.github import headers
from watcher.sources.settings import SdkSource

OK, MISSING, ERROR = "ok", "missing", "error"
MIN_SYMBOL = 4
GENERIC_WORDS = frozenset(
    {"server", "client", "context", "session", "error", "errors", "types", "tool", "tools", "none"}
)
"""Names too common in any notes to say a line is about the failure."""


@dataclass(frozen=True)
class NoteLine:
    version: str
    text: str
    url: str | None


@dataclass(frozen=True)
class NotesFinding:
    configured: bool
    read: tuple[str, ...]
    """The versions whose notes were read."""
    lines: tuple[NoteLine, ...]
    """The lines that name a failing symbol, oldest version first."""
    problems: tuple[str, ...]
    """Versions whose notes could not be read, each with why."""

    def sentence(self) -> str:
        """What the notes say of the failure, in one plain line (escaped by whoever puts it in a message)."""
        if not self.configured:
            return "No release notes configured for this SDK."
        unread = f" (not read: {'; '.join(self.problems)})" if self.problems else ""
        if self.lines:
            first = self.lines[0]
            return f"Announced in {first.version}'s notes: “{first.text}”" + unread
        if not self.read:
            return "No release notes could be read" + unread + "."
        return f"Nothing in the notes of {', '.join(self.read)} matches." + unread

    def as_dict(self) -> dict[str, object]:
        return {
            "configured": self.configured,
            "read": list(self.read),
            "lines": [{"version": n.version, "text": n.text, "url": n.url} for n in self.lines],
            "problems": list(self.problems),
            "sentence": self.sentence(),
        }


def versions_between(
    store: Store, source: SdkSource, baseline: str | None, version: str, limit: int, known: Sequence[str] = ()
) -> list[str]:
    """The versions after `baseline` up to `version` the watcher has seen or `known` names (`version` itself
    always), the newest `limit` of them, oldest first."""

    def key(candidate: str) -> tuple[object, ...]:
        return versions.sort_key(source.registry, candidate)

    seen = {row["version"] for row in store.versions_of(source.name)} | {version, *known}
    low = key(baseline) if baseline else None
    between = sorted((v for v in seen if key(v) <= key(version) and (low is None or key(v) > low)), key=key)
    return between[-limit:]


def _symbol_patterns(symbols: Sequence[str]) -> list[re.Pattern[str]]:
    names = {s for s in symbols if len(s) >= MIN_SYMBOL and s.lower() not in GENERIC_WORDS}
    return [re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w])", re.IGNORECASE) for name in sorted(names)]


def matching_lines(body: str, symbols: Sequence[str]) -> list[str]:
    """The lines of `body` that name one of `symbols` (whole words, any case), list marks and emphasis taken off."""
    patterns = _symbol_patterns(symbols)
    found = []
    for raw in body.splitlines():
        line = re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", "", raw).strip()
        if line and any(p.search(line) for p in patterns):
            found.append(line[:300])
    return found


def release_url(api: str, source: ReleaseNotesSource, version: str) -> str:
    return f"{api.rstrip('/')}/repos/{source.repo}/releases/tags/{source.tag.format(version=version)}"


async def _fetch_github(
    http: RegistryHttp, api: str, notes: ReleaseNotesSource, version: str
) -> tuple[str, str | None, str]:
    """(status, the release's page, its body) of one version's GitHub release."""
    url = release_url(api, notes, version)
    fetched = await http.get(url, headers=headers(notes.token_env), allow_404=True)
    if fetched is None:
        return MISSING, None, ""
    document = fetched.document()
    if not isinstance(document, dict) or not isinstance(document.get("body") or "", str):
        raise SourceError(f"{url}: expected a release object with a text `body`")
    page = document.get("html_url")
    return OK, page if isinstance(page, str) else None, str(document.get("body") or "")


def fetch_github_notes(loaded: LoadedConfig, store: Store, source: SdkSource, wanted: Sequence[str]) -> None:
    """Fetch and store the notes of every version in `wanted` not stored yet (a failed one is asked again)."""
    notes = source.release_notes
    assert notes is not None and notes.repo is not None
    config = loaded.config
    todo = [v for v in wanted if (row := store.release_notes(source.name, v)) is None or row["status"] == ERROR]
    if not todo:
        return
    api = notes.api_url or config.spec.github_api_url
    settings = config.http_client.model_copy(update={"max_response_bytes": config.clusters.notes_max_bytes})

    async def fetch_all() -> None:
        async with httpx.AsyncClient(trust_env=False, headers={"User-Agent": settings.user_agent}) as client:
            http = RegistryHttp(client=client, cache=store, settings=settings)
            for version in todo:
                try:
                    status, page, body = await _fetch_github(http, api, notes, version)
                except SourceError as exc:
                    store.put_release_notes(source.name, version, ERROR, None, [], str(exc))
                    continue
                store.put_release_notes(source.name, version, status, page, body.splitlines())

    asyncio.run(fetch_all())


CHANGELOG = untrusted.Limits("the SDK's changelog", 4 * 1024 * 1024)
_HEADING = re.compile(r"^#{1,3}\s+\[?v?(?P<version>[0-9][^\]\s]*)\]?")


def changelog_sections(text: str) -> dict[str, list[str]]:
    """A Markdown changelog's sections by version (`## 2.0.0a1`, `## [2.0.0] - 2026-07-28`, `# v1.2.0`)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            current = sections.setdefault(heading.group("version"), [])
        elif current is not None:
            current.append(line)
    return sections


def read_changelog(store: Store, source: SdkSource, env_path: str, module: str, wanted: Sequence[str]) -> None:
    """Store the sections of `wanted` versions from the changelog inside the installed package (under the run's
    environment); a version with no section is `missing`; an unreadable file is an error for each."""
    notes = source.release_notes
    assert notes is not None and notes.changelog is not None
    found = sorted(Path(env_path).glob(f"lib/python*/site-packages/{module}/{notes.changelog}"))
    if not found:
        problem = f"no {notes.changelog} in the installed {source.package}"
        for version in wanted:
            store.put_release_notes(source.name, version, ERROR, None, [], problem)
        return
    try:
        data = untrusted.read_bytes(found[0].parent, found[0].name, limits=CHANGELOG)
        text = untrusted.text_of(data, notes.changelog)
    except UntrustedInputError as exc:
        for version in wanted:
            store.put_release_notes(source.name, version, ERROR, None, [], str(exc))
        return
    sections = changelog_sections(text)
    for version in wanted:
        lines = sections.get(version)
        store.put_release_notes(source.name, version, OK if lines is not None else MISSING, None, lines or [])


def explain(store: Store, source: SdkSource | None, wanted: Sequence[str], symbols: Sequence[str]) -> NotesFinding:
    """What the stored notes of `wanted` say of a failure whose symbols are `symbols`."""
    if source is None or source.release_notes is None:
        return NotesFinding(False, (), (), ())
    read: list[str] = []
    lines: list[NoteLine] = []
    problems: list[str] = []
    for version in wanted:
        row = store.release_notes(source.name, version)
        if row is None or row["status"] == ERROR:
            problems.append(f"{version}: {row['error'] if row else 'not fetched'}")
            continue
        if row["status"] == MISSING:
            problems.append(f"{version}: no release notes published")
            continue
        read.append(version)
        lines += [NoteLine(version, text, row["url"]) for text in matching_lines("\n".join(row["lines"]), symbols)]
    return NotesFinding(True, tuple(read), tuple(lines), tuple(problems))
