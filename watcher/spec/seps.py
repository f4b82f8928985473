"""When did SEP-<n> reach Final? From the GitHub history of its file ``seps/<n>-*.md`` in the spec repo.

Walk the file's commits from the newest back while its "Status" line says Final; the oldest commit of
that run is where it became Final, and its committer date (UTC) is the answer. Contents at a commit never
change, so they are fetched as immutable (cached forever). Found dates are kept in the state's kv
(``spec.sep_final``); the config's ``spec.sep_final`` overrides both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from urllib.parse import quote

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from watcher.core.errors import ConfigError
from watcher.core.errors import SepLookupError as SepLookupError
from watcher.sources.base import RegistryHttp, SourceError
from watcher.spec.registry import children_text
from watcher.spec.revisions import github_headers
from watcher.spec.settings import SpecSettings

SEP_DIR = "seps"
KV_KEY = "spec.sep_final"
_MD = MarkdownIt("commonmark")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    path: str
    type: str = "file"


class _Person(BaseModel):
    model_config = ConfigDict(extra="ignore")
    date: datetime


class _CommitBody(BaseModel):
    model_config = ConfigDict(extra="ignore")
    committer: _Person
    author: _Person | None = None


class _Commit(BaseModel):
    model_config = ConfigDict(extra="ignore")
    sha: str
    commit: _CommitBody


_ENTRIES = TypeAdapter(list[_Entry])
_COMMITS = TypeAdapter(list[_Commit])


def sep_status(text: str) -> str | None:
    """The value of the SEP header's "Status" line (e.g. ``- **Status**: Final`` → "Final")."""
    for token in _MD.parse(text):
        if token.type != "inline":
            continue
        # A paragraph may hold several "Key: value" lines joined by soft breaks: read them one by one.
        line: list[Token] = []
        for child in [*(token.children or []), None]:
            if child is not None and child.type not in ("softbreak", "hardbreak"):
                line.append(child)
                continue
            if match := re.match(r"^status\s*:\s*(\S+)", children_text(line), re.IGNORECASE):
                return match.group(1).rstrip(".")
            line = []
    return None


async def lookup_final_date(http: RegistryHttp, settings: SpecSettings, number: int) -> date:
    api = f"{settings.github_api_url.rstrip('/')}/repos/{settings.repo}"
    headers = github_headers(settings)
    try:
        listing = await http.get(f"{api}/contents/{SEP_DIR}", headers=headers)
        assert listing is not None
        entries = _ENTRIES.validate_python(listing.document())
        names = [e.path for e in entries if e.type == "file" and re.fullmatch(rf"{number}-.*\.md", e.name)]
        if not names:
            raise SepLookupError(f"no file {SEP_DIR}/{number}-*.md in {settings.repo}")
        path = names[0]
        history = await http.get(f"{api}/commits?path={quote(path)}&per_page=100", headers=headers)
        assert history is not None
        commits = _COMMITS.validate_python(history.document())  # newest first, as GitHub lists them
        if not commits:
            raise SepLookupError(f"{path} has no commits in {settings.repo}")
        became_final: _Commit | None = None
        status = None
        raw = {**headers, "Accept": "application/vnd.github.raw"}
        for commit in commits:
            body = await http.get(f"{api}/contents/{quote(path)}?ref={commit.sha}", headers=raw, immutable=True)
            assert body is not None
            status = sep_status(body.text())
            if status is None or status.casefold() != "final":
                break
            became_final = commit
        if became_final is None:
            raise SepLookupError(f"SEP-{number} is not Final in {path} (Status: {status or 'not found'})")
        return became_final.commit.committer.date.astimezone(UTC).date()
    except (SourceError, ValidationError) as exc:
        reason = str(exc).splitlines()[0]
        raise SepLookupError(f"SEP-{number}: GitHub lookup failed: {reason}") from exc


async def resolve_final_dates(
    http: RegistryHttp | None,
    settings: SpecSettings,
    numbers: Iterable[int],
    cached: Mapping[str, str] | None = None,
) -> tuple[dict[int, date], dict[int, str], dict[str, str]]:
    """Final dates for these SEPs: config override, then ``cached`` (kv), then GitHub (when ``http`` is given).

    Returns (dates, errors by SEP, the updated cache to store back).
    """
    dates: dict[int, date] = {}
    errors: dict[int, str] = {}
    cache = dict(cached or {})
    for number in sorted(set(numbers)):
        if number in settings.sep_final:
            try:
                dates[number] = date.fromisoformat(settings.sep_final[number])
            except ValueError as exc:
                raise ConfigError(
                    f"spec.sep_final.{number}: {settings.sep_final[number]!r} is not a date (YYYY-MM-DD)"
                ) from exc
        elif str(number) in cache:
            dates[number] = date.fromisoformat(cache[str(number)])
        elif http is None:
            errors[number] = f"SEP-{number}: Final date unknown (offline, and not in spec.sep_final)"
        else:
            try:
                dates[number] = await lookup_final_date(http, settings, number)
                cache[str(number)] = dates[number].isoformat()
            except SepLookupError as exc:
                errors[number] = str(exc)
    return dates, errors, cache
