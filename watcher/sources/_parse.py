"""Helpers the registry adapters share: typed parsing with clear errors, and building Releases."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from watcher.sources.base import Fetched, RegistryHttp, RegistryInfo, Release, SourceError
from watcher.sources.settings import SdkSource

T = TypeVar("T")


class Model(BaseModel):
    """A registry document: unknown fields are allowed (registries add fields), wrong types are not."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


def validate(schema: type[T], data: Any, url: str) -> T:
    """Parse decoded JSON into ``schema``; a mismatch names the URL and the field."""
    try:
        return _adapter(schema).validate_python(data)
    except ValidationError as exc:
        raise SourceError(f"{url}: unexpected response: {describe(exc)}") from exc


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}
"""Building a TypeAdapter is costly; there is one per schema."""


def _adapter(schema: type[T]) -> TypeAdapter[T]:
    if schema not in _ADAPTERS:
        _ADAPTERS[schema] = TypeAdapter(schema)
    adapter: TypeAdapter[T] = _ADAPTERS[schema]
    return adapter


def parse_json(fetched: Fetched, schema: type[T]) -> T:
    return validate(schema, fetched.document(), fetched.url)


def describe(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    field = ".".join(str(part) for part in first["loc"]) or "(document)"
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return f"field {field}: {first['msg']}{more}"


async def get(http: RegistryHttp, url: str, *, headers: dict[str, str] | None = None, **kwargs: Any) -> Fetched:
    """``http.get`` for a document that must exist (a 404 is a SourceError like any other status).

    Every request names the service (``http_client.user_agent``): crates.io and GitHub require a
    User-Agent, and it is polite everywhere else.
    """
    fetched = await http.get(url, headers=with_user_agent(http, headers), **kwargs)
    if fetched is None:
        raise SourceError(f"{url}: HTTP 404 Not Found")
    return fetched


def with_user_agent(http: RegistryHttp, headers: dict[str, str] | None = None) -> dict[str, str]:
    return {"User-Agent": http.settings.user_agent, **(headers or {})}


def root(source: SdkSource, default_base: Callable[[], str]) -> str:
    """The registry root for ``source`` without a trailing slash: its ``url:`` override, else the default."""
    return (source.url or default_base()).rstrip("/")


def utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def release(
    registry: RegistryInfo,
    version: str,
    published: datetime | None,
    *,
    yanked: bool = False,
    registry_flag: bool | None = None,
    notes: Iterable[str | None] = (),
) -> Release:
    """A Release whose pre-release flag follows the registry's version scheme."""
    parsed = registry.scheme.parse(version)
    all_notes = [n for n in notes if n]
    if not parsed.valid:
        how = "taken from the registry's pre-release flag" if registry_flag is not None else "treated as a pre-release"
        all_notes.append(f"{parsed.problem}; {how}")
    return Release(
        version=version,
        published=utc(published),
        prerelease=registry.scheme.is_prerelease(version, registry_flag=registry_flag),
        yanked=yanked,
        note="; ".join(all_notes) or None,
    )


def ordered(registry: RegistryInfo, releases: Iterable[Release]) -> list[Release]:
    """Drop versions the ecosystem ignores (Maven -SNAPSHOT, Composer branches); sort oldest version first."""
    kept = [r for r in releases if not registry.scheme.is_ignored(r.version)]
    return sorted(kept, key=lambda r: registry.scheme.sort_key(r.version))
