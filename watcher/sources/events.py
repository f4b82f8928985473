"""The release event: one new SDK version as the poll found it, in one shape from the poll that writes it to
the queue, the notice, the digest and the CLI that read it.

An adapter answers `Release` (the registry's facts); the poll adds the source and the moment it first saw the
version and stores the event twice: its `versions` row (`version_row`) and its `events` payload (`payload`, the
JSON the digest reads back with `ReleaseEvent.stored`). Payloads stored by earlier releases have the same keys
(tests/fixtures/releases_e8aec50/) and load unchanged."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import TypeAdapter, ValidationError

from watcher.core.store_schema import VersionRow
from watcher.core.timefmt import iso
from watcher.sources.base import Release
from watcher.sources.settings import SdkSource


class StoredEventError(ValueError):
    """A stored release payload that does not read as a release event (names the event and the field)."""


@dataclass(frozen=True)
class ReleaseEvent:
    sdk: str
    """The configured SDK's name (`sdks[].name`)."""
    registry: str
    package: str
    version: str
    prerelease: bool
    yanked: bool
    published: str | None
    """The registry's own time (ISO, UTC); None when the registry does not say."""
    first_seen: str
    """When the watcher first saw the version listed (ISO, UTC)."""

    @classmethod
    def found(cls, source: SdkSource, release: Release, first_seen: str) -> ReleaseEvent:
        """The event for one version an adapter listed for `source`, first seen at `first_seen`."""
        return cls(
            sdk=source.name,
            registry=source.registry,
            package=source.package,
            version=release.version,
            prerelease=release.prerelease,
            yanked=release.yanked,
            published=iso(release.published),
            first_seen=first_seen,
        )

    @classmethod
    def stored(cls, key: str, payload: Mapping[str, object]) -> ReleaseEvent:
        """The event an `events` row of kind "release" holds; a StoredEventError naming the row's key and field."""
        try:
            return _STORED.validate_python(dict(payload))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'payload'}: {e['msg']}" for e in exc.errors())
            raise StoredEventError(f"stored release event {key}: {problems}") from exc

    def payload(self) -> dict[str, object]:
        """The JSON object stored in the `events` table."""
        return dataclasses.asdict(self)

    def version_row(self, *, baseline: bool) -> VersionRow:
        """Its row in the `versions` table (`baseline`: recorded by the SDK's first poll, history not news)."""
        return VersionRow(
            sdk=self.sdk,
            registry=self.registry,
            package=self.package,
            version=self.version,
            prerelease=int(self.prerelease),
            yanked=int(self.yanked),
            published=self.published,
            first_seen=self.first_seen,
            baseline=int(baseline),
        )


_STORED = TypeAdapter(ReleaseEvent)
