"""Versions are versions: a baseline detected from a range resolves to a published one (the lock file first,
else the newest stable the polls saw inside the range, again when a newer one appears), the range kept beside
it; a version typed by a user takes the registry's spelling before it becomes a key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.repos.helpers import central_config, change, team_repo
from watcher.core.store import Store
from watcher.core.store_schema import VersionRow
from watcher.ops.status import collect_status, render_status
from watcher.repos.detect import Detection
from watcher.repos.resolve import resolve, satisfies
from watcher.repos.sync import sync_repos
from watcher.sources.versions import as_known
from watcher.suites.preflight import checked_request

PYPROJECT = '[project]\nname = "books"\nversion = "0.1.0"\ndependencies = ["mcp>=2"]\n'


def seen(store: Store, *numbers: str, sdk: str = "python") -> None:
    for number in numbers:
        store.add_version(
            VersionRow(
                sdk=sdk,
                registry="pypi",
                package="mcp",
                version=number,
                prerelease=int(any(c.isalpha() for c in number)),
                yanked=0,
                published=None,
                first_seen="2026-11-20T10:00:00Z",
                baseline=0,
            )
        )


def test_a_range_becomes_the_newest_stable_inside_it_and_moves_with_a_newer_one(tmp_path: Path):
    repo = team_repo(tmp_path / "repo", "books")
    change(repo, {"server/pyproject.toml": PYPROJECT})
    loaded = central_config(tmp_path, [{"git": str(repo), "team": "books"}])
    store = Store(tmp_path / "state" / "watcher.db")
    seen(store, "1.27.0", "2.0.0", "2.3.0", "2.4.0b1")
    first = sync_repos(loaded, store)
    assert first.config.server("books").baseline_sdk_version == "2.3.0"  # not "2", and not the beta
    found = first.repos[0].detections["books"]
    assert found is not None and found["specifier"] == ">=2" and found["version"] == "2"
    assert found["resolved"] == "newest stable satisfying >=2"
    assert "detected python mcp 2 in server/pyproject.toml as >=2; baseline 2.3.0: newest stable satisfying >=2" in (
        render_status(collect_status(loaded, store))
    )
    seen(store, "2.4.0")  # a newer stable appears: the next read resolves again
    assert sync_repos(loaded, store).config.server("books").baseline_sdk_version == "2.4.0"

    # The lock file wins over the newest stable.
    change(repo, {"server/uv.lock": 'version = 1\n\n[[package]]\nname = "mcp"\nversion = "2.0.0"\n'})
    locked = sync_repos(loaded, store)
    assert locked.config.server("books").baseline_sdk_version == "2.0.0"
    assert locked.repos[0].detections["books"]["resolved"] == "locked in server/uv.lock"  # type: ignore[index]


@pytest.mark.parametrize(
    ("registry", "package", "specifier", "lock", "text", "expected"),
    [
        ("npm", "@modelcontextprotocol/sdk", "^1.20", "package-lock.json",
         '{"packages": {"node_modules/@modelcontextprotocol/sdk": {"version": "1.21.3"}}}', "1.21.3"),
        ("npm", "@modelcontextprotocol/sdk", "^1.20", "yarn.lock",
         '"@modelcontextprotocol/sdk@^1.20":\n  version "1.22.0"\n  resolved "x"\n', "1.22.0"),
        ("crates", "rmcp", "^3.0", "Cargo.lock", '[[package]]\nname = "rmcp"\nversion = "3.1.0"\n', "3.1.0"),
        ("packagist", "mcp/sdk", "^0.1", "composer.lock", '{"packages": [{"name": "mcp/sdk", "version": "v0.1.4"}]}',
         "0.1.4"),
        ("rubygems", "mcp", "~> 0.3", "Gemfile.lock", "GEM\n  specs:\n    mcp (0.3.2)\n    rack (3.0.0)\n", "0.3.2"),
    ],
)  # fmt: skip
def test_each_ecosystems_lock_file_pins_the_version(
    registry: str, package: str, specifier: str, lock: str, text: str, expected: str
):
    detection = Detection("x", registry, package, None, "srv/manifest", specifier)
    files = {f"srv/{lock}": text}
    resolved = resolve(detection, "srv", files.get, known=[])
    assert resolved is not None and (resolved.version, resolved.how) == (expected, f"locked in srv/{lock}")


def test_ranges_are_read_with_their_ecosystems_rules():
    assert satisfies("npm", "1.25.0", "^1.20") and not satisfies("npm", "2.0.0", "^1.20")
    assert satisfies("crates", "3.2.0", "^3.0") and not satisfies("crates", "4.0.0", ">=3, <4")
    assert satisfies("packagist", "0.1.9", "^0.1") and not satisfies("packagist", "0.2.0", "^0.1")
    assert satisfies("rubygems", "0.9.1", "~> 0.3") and not satisfies("rubygems", "1.0.0", "~> 0.3")
    assert satisfies("rubygems", "0.3.7", "~> 0.3.1") and not satisfies("rubygems", "0.4.0", "~> 0.3.1")
    assert satisfies("pypi", "2.3.0", ">=2") and not satisfies("pypi", "2.4.0b1", ">=2")  # no pre-release
    detection = Detection("typescript", "npm", "@modelcontextprotocol/sdk", "1.20", "package.json", "^1.20")
    newest = resolve(detection, "", {}.get, known=["1.19.0", "1.20.1", "1.24.0", "1.25.0-beta.1", "2.0.0"])
    assert newest is not None and newest.version == "1.24.0"
    nothing = resolve(detection, "", {}.get, known=[])
    assert nothing is not None and nothing.version == "1.20" and "provisional" in nothing.how


def test_a_typed_version_takes_the_registrys_spelling(tmp_path: Path):
    assert as_known("pypi", "2.2", ["2.1.0", "2.2.0"]) == "2.2.0"
    assert as_known("npm", "1.2", ["1.2.0", "1.3.0"]) == "1.2.0"
    assert as_known("goproxy", "1.6.0", ["v1.6.0"]) == "v1.6.0"
    assert as_known("pypi", "9.9", ["2.2.0"]) == "9.9"  # not a version it has: as typed
    repo = team_repo(tmp_path / "repo", "books")
    loaded = central_config(tmp_path, [{"git": str(repo), "team": "books"}])
    store = Store(tmp_path / "state" / "watcher.db")
    seen(store, "2.2.0")
    sync_repos(loaded, store)
    from watcher.cli_support import in_force

    # `check --server books --sdk-version 2.2` names a team-file server and runs (and records) 2.2.0.
    assert checked_request(in_force(loaded, store), store, "books", "2.2") == ("2.2.0", [])
