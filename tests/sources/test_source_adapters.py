"""Each registry adapter against the fake registry serving recorded (PyPI, npm) and documented-format fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tests.fakes.registry_server import FakeRegistry, serve_registry
from tests.sources.helpers import by_version, fetch, source
from watcher.sources.base import Release


@pytest.fixture(scope="module")
def registry() -> Iterator[FakeRegistry]:
    with serve_registry() as fake:
        yield fake


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


def prereleases(releases: list[Release]) -> list[str]:
    return [r.version for r in releases if r.prerelease]


def assert_all_utc(releases: list[Release]) -> None:
    for r in releases:
        assert r.published is None or r.published.utcoffset() is not None and not r.published.utcoffset()


def test_pypi_recorded_mcp_has_the_2_0_prerelease_line(registry: FakeRegistry) -> None:
    releases = fetch(source(registry, "pypi", "mcp"))
    got = by_version(releases)
    assert len(releases) == 73
    assert prereleases(releases) == [
        "1.2.0rc1",
        "1.3.0rc1",
        "2.0.0a1",
        "2.0.0a2",
        "2.0.0a3",
        "2.0.0b1",
        "2.0.0b2",
        "2.0.0rc1",
    ]
    # release time = the earliest upload among the release's files
    assert got["2.0.0a1"].published == utc(2026, 6, 11, 9, 55, 46, 823537)
    assert got["2.0.0rc1"].published == utc(2026, 7, 27, 13, 35, 13, 997438)
    assert got["2.0.0"].published == utc(2026, 7, 28, 13, 45, 28, 853348)
    assert not got["2.0.0"].prerelease
    # 1.x kept releasing after 2.0; upload order is not version order (2.0.1 after 2.1.0)
    assert got["1.29.0"].published > got["2.0.0rc1"].published
    assert got["2.0.1"].published > got["2.1.0"].published
    versions = [r.version for r in releases]
    assert versions.index("2.0.0") < versions.index("2.0.1") < versions.index("2.1.0")
    assert not any(r.yanked for r in releases)
    assert_all_utc(releases)


def test_pypi_crafted_yanked_and_fileless_releases(registry: FakeRegistry) -> None:
    got = by_version(fetch(source(registry, "pypi", "mcp", "pypi/crafted")))
    assert got["1.29.2"].yanked and "imports fail on Python 3.10" in (got["1.29.2"].note or "")
    # listed sdist-first: the earliest upload (the wheel) is the release time
    assert got["1.29.2"].published == utc(2026, 8, 30, 10, 0, 1)
    assert not got["1.28.1"].yanked  # only its sdist is yanked
    assert got["2.2.0.dev1"].prerelease and got["2.2.0.dev1"].published is None
    assert got["2.2.0.dev1"].note == "listed without files"
    assert [v for v, r in got.items() if r.prerelease and v.startswith("2.0.0")] == [
        "2.0.0a1",
        "2.0.0a2",
        "2.0.0a3",
        "2.0.0b1",
        "2.0.0b2",
        "2.0.0rc1",
    ]


def test_npm_recorded_v1_sdk(registry: FakeRegistry) -> None:
    releases = fetch(source(registry, "npm", "@modelcontextprotocol/sdk"))
    got = by_version(releases)
    assert len(releases) == 84
    assert prereleases(releases) == ["1.23.0-beta.0"]
    assert got["1.23.0-beta.0"].published == utc(2026, 3, 31, 16, 10, 56, 116000)
    assert got["1.32.2"].note == "dist-tag latest"
    assert releases[-1].version == "1.32.2"
    assert_all_utc(releases)


def test_npm_recorded_v2_server_times_out_of_version_order(registry: FakeRegistry) -> None:
    releases = fetch(source(registry, "npm", "@modelcontextprotocol/server"))
    got = by_version(releases)
    assert prereleases(releases) == [
        "2.0.0-alpha.2",
        "2.0.0-alpha.3",
        "2.0.0-alpha.4",
        "2.0.0-beta.1",
        "2.0.0-beta.2",
        "2.0.0-beta.3",
        "2.0.0-beta.4",
        "2.0.0-beta.5",
    ]
    # the registry's times are per version, not in version order: each keeps its own
    assert got["2.0.0-beta.1"].published == utc(2026, 8, 24, 1, 21, 19, 551000)
    assert got["2.0.0"].published == utc(2026, 7, 29, 9, 15, 9, 194000)
    assert got["2.0.0-beta.3"].published == utc(2026, 7, 11, 5, 49, 20, 64000)


def test_npm_deprecated_and_unpublished_versions(registry: FakeRegistry) -> None:
    got = by_version(fetch(source(registry, "npm", "@modelcontextprotocol/client")))
    assert got["2.0.0-beta.2"].yanked
    assert got["2.0.0-beta.2"].note == "deprecated: Use 2.0.0-beta.3: beta.2 shipped without its type declarations"
    assert "2.0.2" not in got  # unpublished: still in "time", gone from "versions"
    assert got["2.2.0-beta.0"].note == "dist-tag next" and got["2.2.0-beta.0"].prerelease
    assert not got["2.1.0"].yanked


def test_nuget_inlined_registration(registry: FakeRegistry) -> None:
    releases = fetch(source(registry, "nuget", "ModelContextProtocol"))
    got = by_version(releases)
    assert prereleases(releases) == [
        "0.1.0-preview.1",
        "0.1.0-preview.2",
        "0.1.0-preview.4",
        "0.2.0-preview.1",
        "0.3.0-preview.1",
        "0.4.0-preview.1",
        "0.9.0-preview.1",
        "0.9.0-preview.2",
        "2.0.0-preview.1",
    ]
    assert got["2.0.0-preview.1"].published == utc(2026, 6, 20, 8, 45, 12, 345000)
    unlisted = got["0.9.0-preview.2"]
    assert unlisted.yanked and unlisted.published is None and unlisted.note == "unlisted"
    deprecated = got["0.1.0-preview.2"]
    assert deprecated.yanked and deprecated.note is not None
    assert deprecated.note.startswith("deprecated (Legacy): Early previews are superseded")
    assert not got["1.1.0"].yanked and got["1.1.0"].note == "1 known vulnerability"
    assert_all_utc(releases)


def test_nuget_pages_fetched_when_not_inlined(registry: FakeRegistry) -> None:
    releases = fetch(source(registry, "nuget", "ModelContextProtocol.Core"))
    assert [r.version for r in releases] == [
        "0.1.0-preview.4",
        "0.2.0-preview.1",
        "0.3.0-preview.1",
        "0.4.0-preview.1",
        "0.9.0-preview.1",
        "1.0.0",
        "1.1.0",
        "1.2.0",
        "2.0.0-preview.1",
    ]


def test_goproxy_versions_times_and_retractions(registry: FakeRegistry) -> None:
    releases = fetch(source(registry, "goproxy", "github.com/modelcontextprotocol/go-sdk"))
    got = by_version(releases)
    assert [r.version for r in releases][-3:] == ["v1.4.0", "v1.5.0", "v1.6.0-pre.1"]  # list is unordered
    assert prereleases(releases) == ["v1.6.0-pre.1"]
    assert got["v1.6.0-pre.1"].published == utc(2026, 10, 21, 17, 40, 33)
    assert got["v1.2.1"].yanked
    assert got["v1.2.1"].note == (
        "retracted: Contains a data race in the streamable HTTP transport; use v1.2.0 or v1.3.0."
    )
    assert [r.version for r in releases if r.yanked] == ["v1.2.1"]


def test_goproxy_retraction_ranges_in_a_block(registry: FakeRegistry) -> None:
    got = by_version(fetch(source(registry, "goproxy", "github.com/modelcontextprotocol/registry")))
    assert [v for v, r in got.items() if r.yanked] == ["v1.0.0", "v1.0.1"]
    assert got["v1.0.0"].note == "retracted: Published by mistake from a release branch that was never merged."
    assert got["v1.3.0-rc.1"].prerelease and not got["v1.2.0"].prerelease


def test_crates(registry: FakeRegistry) -> None:
    releases = fetch(source(registry, "crates", "rmcp"))
    got = by_version(releases)
    assert prereleases(releases) == [f"3.0.0-beta.{n}" for n in range(1, 6)]
    assert got["3.0.0-beta.1"].published == utc(2026, 8, 14, 10, 0)
    assert got["0.2.0"].yanked and got["0.2.0"].note == "yanked: publishing error: missing feature flags"
    assert releases[-1].version == "3.0.0-beta.5" and releases[-6].version == "2.2.0"


def test_maven_qualifiers_and_snapshots(registry: FakeRegistry) -> None:
    releases = fetch(source(registry, "maven", "io.modelcontextprotocol.sdk:mcp"))
    assert [r.version for r in releases][-6:] == ["1.1.0", "1.2.0", "2.0.0-M1", "2.0.0-M2", "2.0.0-M3", "2.0.0-RC1"]
    assert prereleases(releases) == ["2.0.0-M1", "2.0.0-M2", "2.0.0-M3", "2.0.0-RC1"]
    assert "2.0.0-SNAPSHOT" not in by_version(releases)
    assert all(r.published is None for r in releases)  # maven-metadata.xml has no per-version time
    kotlin = fetch(source(registry, "maven", "io.modelcontextprotocol:kotlin-sdk"))
    assert [r.version for r in kotlin][-2:] == ["0.7.0", "0.7.1"] and not prereleases(kotlin)


def test_rubygems_platforms_and_prerelease(registry: FakeRegistry) -> None:
    releases = fetch(source(registry, "rubygems", "mcp"))
    got = by_version(releases)
    assert [r.version for r in releases] == ["0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0.pre.1"]
    assert prereleases(releases) == ["0.5.0.pre.1"]
    assert got["0.4.0"].published == utc(2026, 2, 12, 17, 45)  # the earliest of its two platform builds
    assert got["0.4.0"].note == "platforms: java, ruby"


def test_packagist_minified_metadata(registry: FakeRegistry) -> None:
    releases = fetch(source(registry, "packagist", "mcp/sdk"))
    got = by_version(releases)
    assert [r.version for r in releases] == ["v0.1.0", "v0.1.1", "v0.2.0", "v0.3.0-RC1"]
    assert prereleases(releases) == ["v0.3.0-RC1"]
    assert got["v0.1.0"].published == utc(2026, 1, 20, 16, 0)  # a field carried over from a later entry
    abandoned = fetch(source(registry, "packagist", "php-mcp/server"))
    assert all(r.yanked and r.note == "package abandoned; use mcp/sdk instead" for r in abandoned)
    assert prereleases(abandoned) == ["3.0.0-beta"]


def test_github_releases_skip_drafts_and_honour_the_flag(registry: FakeRegistry) -> None:
    releases = fetch(source(registry, "github", "modelcontextprotocol/swift-sdk"))
    got = by_version(releases)
    assert "0.12.0" not in got  # a draft
    assert [r.version for r in releases][-3:] == ["0.10.2", "0.11.0-rc.1", "0.11.0"]
    assert prereleases(releases) == ["0.11.0-rc.1"]
    assert got["0.11.0"].published == utc(2026, 10, 6, 18, 0)
    spec = by_version(fetch(source(registry, "github", "modelcontextprotocol/modelcontextprotocol")))
    # date tags are no SemVer: the release's own pre-release flag decides, and the note says so
    assert spec["2026-07-28-RC"].prerelease and not spec["2026-07-28"].prerelease
    assert "taken from the registry's pre-release flag" in (spec["2026-07-28"].note or "")
