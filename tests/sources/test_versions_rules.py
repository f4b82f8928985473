"""Pre-release detection and ordering per ecosystem (watcher.sources.versions), table-driven."""

from __future__ import annotations

import pytest

from watcher.sources import versions

PRERELEASE_CASES = [
    # registry, version, pre-release?
    ("pypi", "2.0.0a1", True),
    ("pypi", "2.0.0a3", True),
    ("pypi", "2.0.0b2", True),
    ("pypi", "2.0.0rc1", True),
    ("pypi", "1.2.0.dev3", True),
    ("pypi", "2.0.0", False),
    ("pypi", "1.30.0", False),
    ("pypi", "1.0.post1", False),
    ("pypi", "2.0.0-rc.1", True),  # PEP 440 normalises this spelling to 2.0.0rc1
    ("npm", "1.23.0-beta.0", True),
    ("npm", "2.0.0-alpha.4", True),
    ("npm", "2.0.0-beta.5", True),
    ("npm", "2.0.0", False),
    ("npm", "1.32.2", False),
    ("npm", "1.0.0+build.5", False),
    ("nuget", "0.9.0-preview.1", True),
    ("nuget", "2.0.0-preview.1", True),
    ("nuget", "1.0.0", False),
    ("nuget", "1.0.0.1", False),
    ("nuget", "2.0", False),
    ("goproxy", "v1.6.0-pre.1", True),
    ("goproxy", "v1.5.0", False),
    ("goproxy", "v0.0.0-20250101120000-abcdef123456", True),
    ("goproxy", "v2.0.0+incompatible", False),
    ("crates", "3.0.0-beta.1", True),
    ("crates", "3.0.0-beta.5", True),
    ("crates", "2.2.0", False),
    ("rubygems", "1.0.0.pre", True),
    ("rubygems", "1.0.0.rc1", True),
    ("rubygems", "0.5.0.pre.1", True),
    ("rubygems", "1.0.0-beta", True),
    ("rubygems", "0.4.0", False),
    ("maven", "2.0.0-M3", True),
    ("maven", "2.0.0-RC1", True),
    ("maven", "2.0.0-alpha-1", True),
    ("maven", "2.0.0-beta2", True),
    ("maven", "2.0.0-CR1", True),
    ("maven", "2.0.0-preview", True),
    ("maven", "2.1.0-SNAPSHOT", True),
    ("maven", "1.2.0", False),
    ("maven", "1.2.0.RELEASE", False),
    ("maven", "1.2.0-GA", False),
    ("maven", "1.2.0.Final", False),
    ("maven", "1.2.0-sp1", False),
    ("maven", "31.0-jre", False),
    ("packagist", "v0.3.0-RC1", True),
    ("packagist", "1.0.0-beta2", True),
    ("packagist", "1.0.0-alpha", True),
    ("packagist", "1.0.0-dev", True),
    ("packagist", "1.0.0-patch1", False),
    ("packagist", "v0.2.0", False),
    ("packagist", "3.0.0-beta", True),
    ("github", "0.11.0-rc.1", True),
    ("github", "v1.6.0-pre.1", True),
    ("github", "0.11.0", False),
    ("github", "v0.10", False),
]


@pytest.mark.parametrize(("registry", "version", "expected"), PRERELEASE_CASES)
def test_prerelease_follows_each_ecosystems_rules(registry: str, version: str, expected: bool) -> None:
    assert versions.is_prerelease(registry, version) is expected
    assert versions.parse(registry, version).valid


IGNORED_CASES = [
    ("maven", "2.0.0-SNAPSHOT", True),
    ("maven", "2.0.0-RC1-SNAPSHOT", True),
    ("maven", "2.0.0-RC1", False),
    ("packagist", "dev-main", True),
    ("packagist", "1.x-dev", True),
    ("packagist", "1.0.0-dev", False),
    ("pypi", "2.0.0a1", False),
    ("npm", "2.0.0-beta.1", False),
]


@pytest.mark.parametrize(("registry", "version", "expected"), IGNORED_CASES)
def test_only_moving_builds_are_ignored(registry: str, version: str, expected: bool) -> None:
    assert versions.is_ignored(registry, version) is expected


ORDER_CASES = [
    ("pypi", ["1.29.0", "2.0.0a1", "2.0.0a2", "2.0.0a3", "2.0.0b1", "2.0.0b2", "2.0.0rc1", "2.0.0", "2.0.1", "2.1.0"]),
    ("npm", ["2.0.0-alpha.2", "2.0.0-alpha.10", "2.0.0-beta.1", "2.0.0-beta.5", "2.0.0", "2.1.0", "2.10.0"]),
    (
        "nuget",
        ["0.9.0-preview.1", "0.9.0-Preview.2", "0.9.0-preview.10", "0.9.0", "1.0.0", "1.0.0.1", "2.0.0-preview.1"],
    ),
    ("goproxy", ["v1.5.0", "v1.6.0-pre.1", "v1.6.0-pre.2", "v1.6.0", "v1.10.0"]),
    ("crates", ["2.2.0", "3.0.0-beta.1", "3.0.0-beta.2", "3.0.0-beta.10", "3.0.0"]),
    ("rubygems", ["0.9", "1.0.0.pre", "1.0.0.rc1", "1.0.0", "1.0.1", "1.10.0"]),
    (
        "maven",
        [
            "1.2.0",
            "2.0.0-alpha1",
            "2.0.0-beta1",
            "2.0.0-M1",
            "2.0.0-M3",
            "2.0.0-RC1",
            "2.0.0-SNAPSHOT",
            "2.0.0",
            "2.0.0-sp1",
            "2.0.1-M1",
            "2.1.0",
        ],
    ),
    ("packagist", ["v0.2.0", "v0.3.0-dev", "v0.3.0-alpha1", "v0.3.0-beta1", "v0.3.0-RC1", "v0.3.0", "v0.3.0-patch1"]),
    ("github", ["0.9.0", "v0.10", "0.10.1", "0.11.0-rc.1", "0.11.0", "v1.0.0"]),
]


@pytest.mark.parametrize(("registry", "ordered"), ORDER_CASES)
def test_sort_key_orders_versions_like_the_ecosystem(registry: str, ordered: list[str]) -> None:
    shuffled = list(reversed(ordered))
    shuffled = shuffled[1::2] + shuffled[::2]
    assert sorted(shuffled, key=lambda v: versions.sort_key(registry, v)) == ordered


@pytest.mark.parametrize(
    ("registry", "version"),
    [
        ("pypi", "not a version"),
        ("npm", "1.0"),
        ("npm", "v1.0.0"),
        ("crates", "latest"),
        ("goproxy", "1.0.0"),
        ("nuget", "1.0.0-"),
        ("rubygems", "1..0"),
        ("maven", "latest"),
        ("packagist", "feature-x"),
        ("github", "2026-07-28"),
    ],
)
def test_unparseable_versions_are_prereleases_unless_the_registry_says(registry: str, version: str) -> None:
    parsed = versions.parse(registry, version)
    assert not parsed.valid
    assert parsed.problem and repr(version) in parsed.problem
    assert versions.is_prerelease(registry, version) is True
    assert versions.is_prerelease(registry, version, registry_flag=False) is False
    assert versions.is_prerelease(registry, version, registry_flag=True) is True
    # they sort below every version the scheme understands
    good = {
        "pypi": "0.0.1",
        "npm": "0.0.1",
        "crates": "0.0.1",
        "goproxy": "v0.0.1",
        "nuget": "0.0.1",
        "rubygems": "0.0.1",
        "maven": "0.0.1",
        "packagist": "0.0.1",
        "github": "0.0.1",
    }[registry]
    assert versions.sort_key(registry, version) < versions.sort_key(registry, good)


def test_registry_flag_adds_to_a_stable_spelling() -> None:
    # GitHub: a release flagged pre-release stays one whatever its tag says; RubyGems likewise.
    assert versions.is_prerelease("github", "0.12.0", registry_flag=True) is True
    assert versions.is_prerelease("github", "0.12.0", registry_flag=False) is False
    assert versions.is_prerelease("rubygems", "1.0.0.rc1", registry_flag=False) is True


def test_unknown_registry_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown registry 'cargo'"):
        versions.parse("cargo", "1.0.0")
