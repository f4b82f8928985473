"""Spec revisions from the spec repo's GitHub releases: ``YYYY-MM-DD`` finals and ``YYYY-MM-DD-RC`` pre-releases.

Current is the newest revision released as a final (not a pre-release). Drafts and tags of another shape
are ignored. The GitHub response is read through the GitHub source's pydantic model so that a changed response is a
clear ``SourceError``, not a KeyError later.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, date
from typing import Any

from pydantic import TypeAdapter, ValidationError

from watcher.sources.base import RegistryHttp, SourceError
from watcher.sources.github import GithubRelease, headers
from watcher.spec.settings import SpecSettings

TAG = re.compile(r"^v?(?P<revision>\d{4}-\d{2}-\d{2})(?:-(?P<suffix>(?:rc|RC)[.-]?\d*))?$")


@dataclass(frozen=True)
class SpecRevision:
    tag: str
    revision: str
    """The revision's date as written, YYYY-MM-DD."""
    released: date
    """When the GitHub release was published (UTC date)."""
    prerelease: bool
    url: str | None = None
    name: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["released"] = self.released.isoformat()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpecRevision:
        return cls(**{**data, "released": date.fromisoformat(data["released"])})


_RELEASES = TypeAdapter(list[GithubRelease])


def parse_releases(data: Any, source: str = "releases") -> list[SpecRevision]:
    try:
        releases = _RELEASES.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SourceError(f"{source}: not a list of GitHub releases ({where}: {first['msg']})") from exc
    revisions = []
    for release in releases:
        match = TAG.match(release.tag_name)
        if release.draft or not match:
            continue
        revision = match.group("revision")
        try:
            date.fromisoformat(revision)
        except ValueError:
            continue
        moment = release.published_at or release.created_at
        released = moment.astimezone(UTC).date() if moment else date.fromisoformat(revision)
        revisions.append(
            SpecRevision(
                tag=release.tag_name,
                revision=revision,
                released=released,
                prerelease=release.prerelease or match.group("suffix") is not None,
                url=release.html_url,
                name=release.name,
            )
        )
    return sorted(revisions, key=lambda r: (r.revision, not r.prerelease, r.tag))


def current_revision(revisions: Sequence[SpecRevision]) -> SpecRevision | None:
    finals = [r for r in revisions if not r.prerelease]
    return max(finals, key=lambda r: (r.revision, r.released)) if finals else None


def release_of(revisions: Sequence[SpecRevision], revision: str) -> SpecRevision | None:
    """The final release of this revision, if it is out."""
    return next((r for r in revisions if r.revision == revision and not r.prerelease), None)


def new_revisions(before: Sequence[SpecRevision], after: Sequence[SpecRevision]) -> list[SpecRevision]:
    """Releases in ``after`` whose tag ``before`` did not have (a tag that turned final counts again)."""
    seen = {(r.tag, r.prerelease) for r in before}
    return [r for r in after if (r.tag, r.prerelease) not in seen]


def github_headers(settings: SpecSettings, environ: dict[str, str] | None = None) -> dict[str, str]:
    return headers(settings.github_token_env, environ)


def releases_url(settings: SpecSettings) -> str:
    return f"{settings.github_api_url.rstrip('/')}/repos/{settings.repo}/releases?per_page=100"


async def fetch_revisions(http: RegistryHttp, settings: SpecSettings) -> list[SpecRevision]:
    url = releases_url(settings)
    fetched = await http.get(url, headers=github_headers(settings))
    assert fetched is not None
    return parse_releases(fetched.document(), url)
