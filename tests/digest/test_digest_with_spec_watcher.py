"""The digest reads what the real spec watcher keeps: poll_spec against the local GitHub fake, then a digest."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import httpx
import pytest

from tests.digest.helpers import DIGEST_NOW, REGISTRY, SPEC_RELEASES, TODAY, build_state, write_config
from tests.fakes.github_server import FakeGitHub
from watcher.config import LoadedConfig
from watcher.core.store import Store
from watcher.core.timefmt import utcnow
from watcher.digest.build import build_digest
from watcher.digest.markdown import render_markdown
from watcher.spec.watch import poll_spec

REPO = "example/spec"
REGISTRY_PATH = f"{REPO}/main/docs/deprecated.mdx"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.put_raw(REGISTRY_PATH, REGISTRY)
        fake.set_releases(
            REPO,
            [
                FakeGitHub.release(r.tag, f"{r.released.isoformat()}T17:00:00Z", prerelease=r.prerelease)
                for r in reversed(SPEC_RELEASES)
            ],
        )
        yield fake


def poll(loaded: LoadedConfig, store: Store, today: date) -> dict:
    async def run() -> dict:
        async with httpx.AsyncClient() as client:
            return await poll_spec(loaded, store, client, today=today)

    return asyncio.run(run())


def test_digest_from_poll_spec_state_matches_and_lists_its_change_events(gh: FakeGitHub, tmp_path: Path):
    spec = {"registry_url": gh.raw_url(REGISTRY_PATH), "repo": REPO, "github_api_url": gh.api_url}
    loaded = write_config(tmp_path / "polled", spec=spec)
    store = Store(loaded.resolve(loaded.config.state))
    assert poll(loaded, store, TODAY)["baseline"] is True
    polled = build_digest(loaded, store, "books", TODAY, until=DIGEST_NOW)

    # The same registry and releases seeded the way the digest tests do: the same section 1 and outlook.
    seeded_state = build_state(tmp_path / "seeded")
    seeded = build_digest(seeded_state.loaded, seeded_state.store, "books", TODAY, until=DIGEST_NOW)
    strip = lambda d: [(f.feature, f.state, f.earliest_removal, f.days_left, f.basis) for f in d.features]  # noqa: E731
    assert strip(polled) == strip(seeded)
    assert polled.outlook == seeded.outlook
    assert polled.problems == []

    # The registry moves Roots' date; the watcher records the change, the digest puts it at the top.
    gh.put_raw(
        REGISTRY_PATH,
        REGISTRY.replace("on or after 2027-07-28 |\n| [Sampling]", "on or after 2028-01-28 |\n| [Sampling]"),
    )
    summary = poll(loaded, store, TODAY)
    assert [(c["kind"], c["subject"]) for c in summary["changes"]] == [("earliest-removal-changed", "Roots")]
    now = utcnow()
    digest = build_digest(loaded, store, "books", TODAY, since=now - timedelta(hours=1), until=now + timedelta(hours=1))
    assert [(c.kind, c.subject) for c in digest.changes] == [("earliest-removal-changed", "Roots")]
    assert digest.changes[0].after["earliest_removal"] == "2028-03-28"
    assert "**Date moved:** **Roots** earliest removal 2027-09-28 → 2028-03-28" in render_markdown(digest)
    roots = next(f for f in digest.features if f.feature == "Roots")
    assert roots.earliest_removal == "2028-03-28"


def test_an_unreadable_registry_is_a_heads_up_and_the_last_good_copy_is_used(gh: FakeGitHub, tmp_path: Path):
    spec = {"registry_url": gh.raw_url(REGISTRY_PATH), "repo": REPO, "github_api_url": gh.api_url}
    loaded = write_config(tmp_path, spec=spec)
    store = Store(loaded.resolve(loaded.config.state))
    poll(loaded, store, TODAY)
    gh.put_raw(REGISTRY_PATH, REGISTRY.replace("| Migration path |", "| Migration |", 1))
    assert poll(loaded, store, TODAY)["using_last_good"] is True
    digest = build_digest(loaded, store, "books", TODAY, until=DIGEST_NOW)
    assert len(digest.deprecated) == 5, "the last good copy stays in use"
    (problem,) = digest.problems
    assert problem.startswith("The spec registry cannot be read at the moment: cannot read the registry:")
    assert "no column 'Migration path'" in problem
    saved = store.get_kv("spec.registry.last_good")["saved"]
    assert problem.endswith(f"The last good copy (saved {saved}) stays in use.")
