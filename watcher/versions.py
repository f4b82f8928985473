"""Pre-release rules and version ordering by registry: each registry's scheme (watcher.schemes) as
its adapter declares it (``REGISTRY.scheme`` in ``watcher/sources/<registry>.py``)."""

from __future__ import annotations

from typing import Any

from watcher.schemes import ParsedVersion, VersionScheme
from watcher.sources import REGISTRIES as _INFO

REGISTRIES = tuple(_INFO)


def scheme_of(registry: str) -> VersionScheme:
    try:
        return _INFO[registry].scheme
    except KeyError:
        raise ValueError(f"unknown registry {registry!r}; known: {', '.join(REGISTRIES)}") from None


def parse(registry: str, version: str) -> ParsedVersion:
    return scheme_of(registry).parse(version)


def is_prerelease(registry: str, version: str, *, registry_flag: bool | None = None) -> bool:
    """Whether ``version`` is a pre-release on ``registry`` (see VersionScheme.is_prerelease)."""
    return scheme_of(registry).is_prerelease(version, registry_flag=registry_flag)


def is_ignored(registry: str, version: str) -> bool:
    return scheme_of(registry).is_ignored(version)


def sort_key(registry: str, version: str) -> tuple[Any, ...]:
    """Orders versions of one registry; unparseable versions sort below all others, by text."""
    return scheme_of(registry).sort_key(version)
