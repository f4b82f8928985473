"""Class 12: ``digest --preview`` / ``--send`` read the spec first when the state has no copy of the registry,
or one older than ``schedule.spec_poll_minutes``; a spec that cannot be read is named in the digest's problems.

The spec repository is the loopback fake GitHub (faults injected there); the watcher's clock is pinned.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.digest.helpers import clock_at
from tests.fakes.github_server import FakeGitHub
from tests.spec.helpers import REGISTRY_PATH, REPO, fixture, poll, serve_spec, spec_config
from watcher.cli import main
from watcher.config import load_config
from watcher.core.store import Store
from watcher.spec.watch import KV_LAST_GOOD

POLLED = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
NOT_READ_YET = "has not been read yet"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        serve_spec(fake)
        yield fake


@pytest.fixture
def config(gh: FakeGitHub, write_config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # the digest's pictures go under the state folder there
    return write_config(spec_config(gh, teams=[{"name": "books", "slack_channel": "#books-mcp"}]))


def digest(config: Path, now: datetime, *options: str) -> int:
    with clock_at(now):
        return main(["--config", str(config), "digest", *options, "--today", now.date().isoformat()])


def registry_reads(gh: FakeGitHub) -> int:
    return gh.count(f"/raw/{REGISTRY_PATH}")


def test_a_never_read_spec_is_read_before_the_preview(gh, config, capsys):
    assert digest(config, POLLED, "--preview") == 0
    out = capsys.readouterr().out
    assert NOT_READ_YET not in out
    for feature in ("Roots", "Dynamic Client Registration", "HTTP+SSE transport"):
        assert feature in out
    assert registry_reads(gh) == 1


def test_a_stale_copy_is_read_again_a_fresh_one_is_not(gh, config, capsys):
    loaded = load_config(config)
    store = Store(loaded.resolve(loaded.config.state))
    with clock_at(POLLED):
        poll(loaded, store, POLLED.date().isoformat())  # the service's last poll
    saved = store.get_kv(KV_LAST_GOOD)["saved"]
    gh.put_raw(REGISTRY_PATH, fixture("registry_next.mdx"))  # the spec moves on: a new deprecated row
    reads = registry_reads(gh)

    assert digest(config, POLLED + timedelta(hours=1), "--preview") == 0  # within spec_poll_minutes (360)
    assert "Resource subscriptions" not in capsys.readouterr().out
    assert registry_reads(gh) == reads

    assert digest(config, POLLED + timedelta(hours=7), "--preview") == 0
    out = capsys.readouterr().out
    assert "Resource subscriptions" in out and NOT_READ_YET not in out
    assert registry_reads(gh) == reads + 1
    # as `deprecations`: the poller's last good copy stays, so its next poll still announces the change
    assert store.get_kv(KV_LAST_GOOD)["saved"] == saved
    with clock_at(POLLED + timedelta(hours=7)):
        changes = poll(loaded, store, POLLED.date().isoformat())["changes"]
    assert "Resource subscriptions" in [c["subject"] for c in changes]
    store.close()


def test_an_unreachable_spec_is_named_in_the_digest_not_an_empty_section(gh, config, capsys):
    gh.fail_next(f"/raw/{REGISTRY_PATH}", status=503, times=10)
    gh.fail_next(f"/repos/{REPO}/releases", status=503, times=10)
    assert digest(config, POLLED, "--preview") == 0
    out = capsys.readouterr().out
    assert "The spec's deprecated-features registry could not be read (cannot read the registry: " in out
    assert "503" in out and "the list below is empty because nothing is known" in out
    assert "The spec releases could not be read just now (cannot read the spec releases: " in out

    assert digest(config, POLLED, "--send") == 0  # no Slack settings: the console
    assert "--- notice for books → #books-mcp [digest:books:2026-W49]" in capsys.readouterr().out
    loaded = load_config(config)
    store = Store(loaded.resolve(loaded.config.state))
    row = store.outbox_row("digest:books:2026-W49")
    store.close()
    assert row is not None and row["status"] == "console"
    assert "The spec's deprecated-features registry could not be read (cannot read the registry: " in row["blocks"]
