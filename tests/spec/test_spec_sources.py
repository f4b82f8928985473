"""Spec releases and SEP Final dates, read from the fake GitHub over loopback."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import date

import httpx
import pytest

from tests.fakes.github_server import FakeGitHub
from tests.spec.helpers import REPO, add_sep_history, sep_header, spec_releases
from watcher.sources.base import MemoryHttpCache, RegistryHttp, SourceError
from watcher.sources.settings import HttpSettings
from watcher.spec.revisions import current_revision, fetch_revisions, new_revisions, parse_releases
from watcher.spec.seps import SepLookupError, lookup_final_date, resolve_final_dates, sep_status
from watcher.spec.settings import SpecSettings

NO_RETRIES = HttpSettings(retries=0, backoff_seconds=0, timeout_seconds=5)


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake


def settings_for(gh: FakeGitHub, **extra) -> SpecSettings:
    return SpecSettings(repo=REPO, github_api_url=gh.api_url, registry_url=gh.raw_url("x.mdx"), **extra)


def run(coro_factory, cache: MemoryHttpCache | None = None):
    async def go():
        async with httpx.AsyncClient() as client:
            http = RegistryHttp(client, cache or MemoryHttpCache(), NO_RETRIES)
            return await coro_factory(http), http.stats

    return asyncio.run(go())


# --- releases --------------------------------------------------------------------------------------------


def test_releases_give_revisions_rcs_and_the_current_revision(gh):
    gh.set_releases(REPO, spec_releases())
    revisions, _ = run(lambda http: fetch_revisions(http, settings_for(gh)))
    assert [(r.tag, r.prerelease, r.released.isoformat()) for r in revisions] == [
        ("2024-11-05", False, "2024-11-05"),
        ("2025-03-26", False, "2025-03-26"),
        ("2025-06-18", False, "2025-06-18"),
        ("2025-11-25", False, "2025-11-25"),
        ("2026-07-28-RC", True, "2026-05-29"),
        ("2026-07-28", False, "2026-07-28"),
    ]  # "schema-tools-v0.3.1" is not a revision
    current = current_revision(revisions)
    assert current is not None and current.tag == "2026-07-28"
    assert gh.requests[-1].query == {"per_page": "100"}


def test_a_newer_rc_does_not_become_current_and_drafts_are_ignored():
    data = spec_releases(
        FakeGitHub.release("2027-03-30-RC", "2027-02-12T10:00:00Z", prerelease=True),
        FakeGitHub.release("2027-09-28", "2027-01-01T10:00:00Z", draft=True),
    )
    revisions = parse_releases(data)
    current = current_revision(revisions)
    assert current is not None and current.revision == "2026-07-28"
    assert [r.tag for r in new_revisions(parse_releases(spec_releases()), revisions)] == ["2027-03-30-RC"]


def test_a_release_list_of_another_shape_is_a_source_error():
    with pytest.raises(SourceError, match=r"not a list of GitHub releases \(0.tag_name: Field required\)"):
        parse_releases([{"name": "2026-07-28"}], "releases")


def test_releases_are_fetched_conditionally_with_the_token_when_set(gh, monkeypatch):
    gh.set_releases(REPO, spec_releases())
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-test-token")
    cache = MemoryHttpCache()
    run(lambda http: fetch_revisions(http, settings_for(gh)), cache)
    again, stats = run(lambda http: fetch_revisions(http, settings_for(gh)), cache)
    assert stats.not_modified == 1 and len(again) == 6
    first, second = gh.requests
    assert first.headers["authorization"] == "Bearer ghp-test-token"
    assert "if-none-match" not in first.headers and second.headers["if-none-match"]
    assert second.status == 304


# --- SEP Final dates -----------------------------------------------------------------------------------


def test_sep_status_line_is_read_from_the_header():
    assert sep_status(sep_header(2596, "Lifecycle", "Final")) == "Final"
    assert sep_status(sep_header(2596, "Lifecycle", "In-Review")) == "In-Review"
    assert sep_status("# SEP-1\n\nNo header here.\n") is None


def test_the_final_date_is_where_the_status_line_became_final(gh):
    add_sep_history(
        gh,
        2596,
        "feature-lifecycle",
        [
            ("Draft", "2026-04-17T09:00:00Z"),
            ("In-Review", "2026-05-02T09:00:00Z"),
            ("Accepted", "2026-05-20T09:00:00Z"),
            ("Final", "2026-06-03T21:30:00-07:00"),  # the 4th in UTC
            ("Final", "2026-07-01T09:00:00Z"),  # a later typo fix keeps it Final
        ],
    )
    add_sep_history(gh, 2597, "something-else", [("Final", "2026-01-01T00:00:00Z")])
    found, stats = run(lambda http: lookup_final_date(http, settings_for(gh), 2596))
    assert found == date(2026, 6, 4)
    # listing + history + the file at three commits (newest back to the first non-Final one)
    assert stats.requests == 5


def test_a_sep_that_is_not_final_or_has_no_file_is_a_lookup_error(gh):
    add_sep_history(gh, 3002, "draft-thing", [("Draft", "2026-04-17T09:00:00Z")])
    with pytest.raises(SepLookupError, match=r"SEP-3002 is not Final in seps/3002-draft-thing.md \(Status: Draft\)"):
        run(lambda http: lookup_final_date(http, settings_for(gh), 3002))
    with pytest.raises(SepLookupError, match=r"no file seps/4000-\*.md"):
        run(lambda http: lookup_final_date(http, settings_for(gh), 4000))
    gh.fail_next("/repos/", status=503)
    with pytest.raises(SepLookupError, match="SEP-3002: GitHub lookup failed: .*HTTP 503"):
        run(lambda http: lookup_final_date(http, settings_for(gh), 3002))


def test_config_override_then_cache_then_github(gh):
    add_sep_history(gh, 3002, "thing", [("Draft", "2026-01-05T09:00:00Z"), ("Final", "2026-02-10T09:00:00Z")])
    settings = settings_for(gh, sep_final={2596: "2026-06-03"})

    async def resolve(http):
        return await resolve_final_dates(http, settings, [2596, 3002, 3003], {"3003": "2025-12-01"})

    (dates, errors, cache), _ = run(resolve)
    assert dates == {2596: date(2026, 6, 3), 3002: date(2026, 2, 10), 3003: date(2025, 12, 1)}
    assert errors == {}
    assert cache == {"3002": "2026-02-10", "3003": "2025-12-01"}
    assert not any("2596" in r.path for r in gh.requests)  # the override needs no lookup
    offline = asyncio.run(resolve_final_dates(None, settings, [3004], cache))
    assert offline[1] == {3004: "SEP-3004: Final date unknown (offline, and not in spec.sep_final)"}
