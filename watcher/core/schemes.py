"""Version schemes: how each ecosystem spells and orders versions and marks pre-releases.

A registry adapter names its scheme (`watcher/sources/<registry>.py`, `REGISTRY.scheme`); this
module knows nothing of registries. The schemes:

==============  ==========================================================================================
scheme          rules
==============  ==========================================================================================
``pep440``      PEP 440 (``packaging``): a, b, rc and .dev releases are pre-releases
``semver``      SemVer 2 (``semver``): anything after ``-`` is a pre-release
``go-module``   SemVer with a leading ``v`` (stripped); pseudo-versions are pre-releases too
``nuget``       NuGet's SemVer 2 (1-4 numeric parts, ``-label`` marks a pre-release, labels compare
                case-insensitively)
``rubygems``    Gem::Version: any letter in the version (``1.0.0.pre``, ``1.0.0.rc1``) marks a pre-release;
                the registry's own ``prerelease`` field is honoured as well
``maven``       Maven qualifiers: alpha/a, beta/b, milestone/m, preview, rc/cr and SNAPSHOT are pre-releases;
                ga/final/release and sp are not; ``-SNAPSHOT`` is ignored (a moving build, never a release)
``composer``    Composer stability: -dev/-alpha/-beta/-RC are pre-releases, -patch is stable; branches
                (``dev-main``, ``1.x-dev``) are ignored
``github-tag``  release tags: SemVer with an optional ``v``; ``X.Y`` counts as ``X.Y.0``; the release's own
                ``prerelease`` flag is honoured as well
==============  ==========================================================================================

Unparseable versions (a deliberate, documented choice): a version the scheme cannot parse is kept,
sorts below every parseable version, and counts as a **pre-release** unless the registry itself
says otherwise (``registry_flag``). The service exists to warn before a pre-release breaks a team;
an odd spelling is far more often a test or pre-release build than a final one, and a needless
notice costs less than a missed beta. ``parse(...).problem`` says why a version did not parse, so
adapters can put it in the release's note.

Unknown Maven qualifiers (``-jre``, ``-kotlin``) parse fine: Maven orders them after the release and
they are not pre-releases.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import semver
from packaging.version import InvalidVersion, Version


@dataclass(frozen=True)
class ParsedVersion:
    scheme: str
    text: str
    valid: bool
    prerelease: bool
    """By the scheme's own rules; unparseable versions count as pre-releases (see the module doc)."""
    ignored: bool
    """Not a release at all (Maven -SNAPSHOT, Composer branches): adapters drop these."""
    key: tuple[Any, ...]
    """Sort key: (1, scheme key) for parseable versions, (0, text) for the rest (they sort first)."""
    problem: str | None = None


Reading = tuple[Any, bool, bool]  # (key, prerelease, ignored)


@dataclass(frozen=True)
class VersionScheme:
    name: str
    read: Callable[[str], Reading] = field(repr=False)
    """Raises _Unparseable for a version this scheme cannot read."""

    def parse(self, version: str) -> ParsedVersion:
        return _parse_cached(self, version)

    def is_prerelease(self, version: str, *, registry_flag: bool | None = None) -> bool:
        """Whether ``version`` is a pre-release.

        ``registry_flag`` is the registry's own statement where it has one (RubyGems ``prerelease``,
        GitHub's release ``prerelease``): a pre-release if either says so; for a version the scheme
        cannot parse, the registry's flag decides, and without one it counts as a pre-release.
        """
        parsed = self.parse(version)
        if not parsed.valid:
            return registry_flag if registry_flag is not None else True
        return parsed.prerelease or bool(registry_flag)

    def is_ignored(self, version: str) -> bool:
        return self.parse(version).ignored

    def sort_key(self, version: str) -> tuple[Any, ...]:
        """Orders versions; unparseable versions sort below all others, by text."""
        return self.parse(version).key


@lru_cache(maxsize=8192)
def _parse_cached(scheme: VersionScheme, version: str) -> ParsedVersion:
    text = version.strip()
    try:
        key, prerelease, ignored = scheme.read(text)
    except _Unparseable as exc:
        return ParsedVersion(scheme.name, version, False, True, False, (0, text), str(exc))
    return ParsedVersion(scheme.name, version, True, prerelease, ignored, (1, key), None)


class _Unparseable(ValueError):
    pass


# --- PEP 440 ---------------------------------------------------------------------------------------


def _pep440(text: str) -> Reading:
    try:
        v = Version(text)
    except InvalidVersion:
        raise _Unparseable(f"{text!r} is not a PEP 440 version") from None
    return v, v.is_prerelease, False


# --- SemVer (npm, crates, Go) ----------------------------------------------------------------------


def _semver(text: str) -> Reading:
    try:
        v = semver.Version.parse(text)
    except (ValueError, TypeError):
        raise _Unparseable(f"{text!r} is not a SemVer 2 version") from None
    return v, v.prerelease is not None, False


def _goproxy(text: str) -> Reading:
    if not text.startswith("v"):
        raise _Unparseable(f"{text!r} is not a Go module version (expected a leading 'v')")
    return _semver(text[1:])


_TAG_SHORT = re.compile(r"^(\d+\.\d+)(?=$|[-+])")


def _github(text: str) -> Reading:
    bare = text[1:] if text[:1] in ("v", "V") else text
    bare = _TAG_SHORT.sub(r"\1.0", bare)
    try:
        v = semver.Version.parse(bare)
    except (ValueError, TypeError):
        raise _Unparseable(f"{text!r} is not a SemVer-like release tag") from None
    return v, v.prerelease is not None, False


# --- NuGet -----------------------------------------------------------------------------------------

_NUGET = re.compile(r"^(?P<n>\d+(?:\.\d+){0,3})(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?$")


def _nuget(text: str) -> Reading:
    m = _NUGET.match(text)
    if not m:
        raise _Unparseable(f"{text!r} is not a NuGet version")
    numbers = tuple(int(p) for p in m["n"].split("."))
    numbers = numbers + (0,) * (4 - len(numbers))
    pre = m["pre"]
    # semver orders the label (numeric identifiers numerically, a missing label above any label);
    # NuGet compares labels case-insensitively.
    label_key = semver.Version(0, 0, 0, prerelease=pre.lower() if pre else None)
    return (numbers, label_key), pre is not None, False


# --- RubyGems --------------------------------------------------------------------------------------

_GEM = re.compile(r"^[0-9]+(?:\.[0-9a-zA-Z]+)*(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$")
_GEM_SEGMENT = re.compile(r"[0-9]+|[a-zA-Z]+")


def _rubygems(text: str) -> Reading:
    if not _GEM.match(text):
        raise _Unparseable(f"{text!r} is not a RubyGems version")
    prerelease = any(c.isalpha() for c in text)
    segments: list[int | str] = [int(s) if s.isdigit() else s for s in _GEM_SEGMENT.findall(text.replace("-", ".pre."))]
    # Gem::Version's canonical form: trailing zeros of the release part (and of the pre-release
    # part) do not count, so 1.0 == 1 and 1.0.a == 1.a.
    first_letter = next((i for i, s in enumerate(segments) if isinstance(s, str)), len(segments))
    release, rest = segments[:first_letter], segments[first_letter:]
    while release and release[-1] == 0:
        release.pop()
    while rest and rest[-1] == 0:
        rest.pop()
    # A letter segment sorts below any number, and a missing segment counts as 0; the end marker
    # (1,) sits between the two so "1.a" < "1" < "1.0.1".
    key = tuple((2, s) if isinstance(s, int) else (0, s) for s in (*release, *rest)) + ((1,),)
    return key, prerelease, False


# --- Maven -----------------------------------------------------------------------------------------

_MAVEN_QUALIFIERS = {
    "alpha": 0,
    "a": 0,
    "beta": 1,
    "b": 1,
    "milestone": 2,
    "m": 2,
    "preview": 3,
    "rc": 4,
    "cr": 4,
    "snapshot": 5,
    "": 6,
    "ga": 6,
    "final": 6,
    "release": 6,
    "sp": 7,
}
_MAVEN_RELEASE = 6
_MAVEN_UNKNOWN = 8
_MAVEN_TOKEN = re.compile(r"[0-9]+|[a-z]+")


def _maven(text: str) -> Reading:
    lowered = text.lower()
    if not re.match(r"^[0-9]", lowered) or not re.fullmatch(r"[0-9a-z._+-]+", lowered):
        raise _Unparseable(f"{text!r} is not a Maven version")
    tokens = _MAVEN_TOKEN.findall(lowered)
    numbers: list[int] = []
    while tokens and tokens[0].isdigit():
        numbers.append(int(tokens.pop(0)))
    while numbers and numbers[-1] == 0:
        numbers.pop()
    qualifiers: list[tuple[int, str, int]] = []
    for token in tokens:
        if token.isdigit():
            if qualifiers and qualifiers[-1][2] == -1:  # "rc" "1" → rc1
                rank, name, _ = qualifiers[-1]
                qualifiers[-1] = (rank, name, int(token))
            else:
                qualifiers.append((_MAVEN_RELEASE, "", int(token)))
            continue
        rank = _MAVEN_QUALIFIERS.get(token, _MAVEN_UNKNOWN)
        qualifiers.append((rank, token if rank == _MAVEN_UNKNOWN else "", -1))
    # "ga", "final", "release" and a bare "-0" mean the release itself: 1.0.0.RELEASE == 1.0.0.
    qualifiers = [(rank, name, max(number, 0)) for rank, name, number in qualifiers]
    qualifiers = [q for q in qualifiers if q != (_MAVEN_RELEASE, "", 0)]
    prerelease = any(rank < _MAVEN_RELEASE for rank, _, _ in qualifiers)
    ignored = lowered.endswith("-snapshot") or lowered.endswith(".snapshot")
    # The release marker closes every key so that "2.0.0-RC1" < "2.0.0" and "-RC1-SNAPSHOT" < "-RC1".
    key = (tuple(numbers), tuple(qualifiers) + ((_MAVEN_RELEASE, "", 0),))
    return key, prerelease, ignored


# --- Composer (Packagist) --------------------------------------------------------------------------

_COMPOSER = re.compile(
    r"^v?(?P<n>\d+(?:\.\d+){0,3})"
    r"(?:[._-]?(?P<stability>stable|beta|b|rc|alpha|a|patch|pl|p)(?P<num>(?:[.-]?\d+)*))?"
    r"(?P<dev>[.-]?dev)?$",
    re.IGNORECASE,
)
_COMPOSER_RANK = {"dev": 0, "alpha": 1, "beta": 2, "rc": 3, "stable": 4, "patch": 5}
_COMPOSER_ALIASES = {"a": "alpha", "b": "beta", "p": "patch", "pl": "patch"}


def _composer(text: str) -> Reading:
    lowered = text.lower()
    if lowered.startswith("dev-") or lowered.endswith(".x-dev"):
        # A branch, not a release: Packagist lists these in the ~dev file only.
        return ((), (), 0, ()), True, True
    m = _COMPOSER.match(text)
    if not m:
        raise _Unparseable(f"{text!r} is not a Composer version")
    numbers = tuple(int(p) for p in m["n"].split("."))
    numbers = numbers + (0,) * (4 - len(numbers))
    stability = (m["stability"] or "stable").lower()
    stability = _COMPOSER_ALIASES.get(stability, stability)
    suffix_numbers = tuple(int(p) for p in re.findall(r"\d+", m["num"] or ""))
    if m["dev"]:
        # "1.0.0-dev" is below every tagged 1.0.0 build; "1.0.0-beta2-dev" below "1.0.0-beta2".
        rank = _COMPOSER_RANK["dev"] if stability == "stable" else _COMPOSER_RANK[stability]
        key = (numbers, rank, suffix_numbers, 0)
        return key, True, False
    rank = _COMPOSER_RANK[stability]
    return (numbers, rank, suffix_numbers, 1), rank < _COMPOSER_RANK["stable"], False


PEP440 = VersionScheme("pep440", _pep440)
SEMVER = VersionScheme("semver", _semver)
GO_MODULE = VersionScheme("go-module", _goproxy)
NUGET = VersionScheme("nuget", _nuget)
RUBYGEMS = VersionScheme("rubygems", _rubygems)
MAVEN = VersionScheme("maven", _maven)
COMPOSER = VersionScheme("composer", _composer)
GITHUB_TAG = VersionScheme("github-tag", _github)
SCHEMES = {s.name: s for s in (PEP440, SEMVER, GO_MODULE, NUGET, RUBYGEMS, MAVEN, COMPOSER, GITHUB_TAG)}
