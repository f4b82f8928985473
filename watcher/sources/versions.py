"""Pre-release rules and version ordering by registry: each registry's scheme (watcher.core.schemes) as
its adapter declares it (``REGISTRY.scheme`` in ``watcher/sources/<registry>.py``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from watcher.core.schemes import ParsedVersion, VersionScheme
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


SAFE_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z._+-]{0,127}")
"""Every character a version of any supported scheme needs, and nothing a shell, a URL or Slack reads
specially (no space, quote, ``$``, ``;``, ``<``, ``/``…): the strict set a version must match before it is
substituted into a command, a path or a workflow input."""


class UnsafeVersion(ValueError):
    """A version from outside that may not be run: it does not parse under its scheme or holds other characters."""


def run_refusal(registry: str, version: str) -> str | None:
    """Why ``version`` may not be used in a command (install, ``prepare``, ``start``, a dispatch); None when it may.

    It must match ``SAFE_VERSION`` exactly and parse under the registry's scheme. A refused version is
    still recorded and announced (as unparseable), never run."""
    if not SAFE_VERSION.fullmatch(version):
        shown = version if len(version) <= 80 else version[:80] + "…"
        return f"version {shown!r} holds characters no {registry} version has; it is recorded, never run"
    parsed = parse(registry, version)
    if not parsed.valid:
        return f"{parsed.problem}; it is recorded, never run"
    if parsed.ignored:
        return f"{version!r} is not a release on {registry}; never run"
    return None


def require_runnable(registry: str, version: str) -> str:
    """``version`` itself, or UnsafeVersion with the reason (see ``run_refusal``)."""
    problem = run_refusal(registry, version)
    if problem:
        raise UnsafeVersion(problem)
    return version


_SHORT = re.compile(r"^(v?)(\d+)(\.\d+)?$")


def as_known(registry: str, version: str, known: Iterable[str]) -> str:
    """``version`` as the registry spells it, when one of ``known`` is the same version under its scheme (PyPI's
    ``2.2`` is ``2.2.0``; on npm, crates and the Go proxy a short ``1.2`` is read as ``1.2.0``, ``v1.2.0`` on
    the Go proxy); else ``version`` unchanged. What a user typed becomes a key only in the registry's spelling."""
    listed = list(known)
    if version in listed:
        return version
    candidates = [version] if version.startswith("v") else [version, f"v{version}"]
    short = _SHORT.match(version.strip())
    if short:
        prefix, major, minor = short.group(1), short.group(2), short.group(3) or ".0"
        padded = f"{major}{minor}.0"
        candidates += [padded, f"v{padded}"] if not prefix else [f"v{padded}", padded]
    for candidate in candidates:
        wanted = parse(registry, candidate)
        if not wanted.valid:
            continue
        same = [other for other in listed if parse(registry, other).key == wanted.key]
        if same:
            return same[0]
    return version
