"""No false all-clear: with the spec's registry unreadable (and no earlier copy), every rendering of the digest
— console, Markdown, HTML, Slack blocks, the timeline picture — says it is unknown, never "0 deprecated"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.digest.helpers import clock_at
from tests.fakes.github_server import FakeGitHub
from tests.spec.helpers import REGISTRY_PATH, REPO, serve_spec, spec_config
from watcher.cli import main
from watcher.config import load_config
from watcher.core.store import Store
from watcher.digest.build import build_digest
from watcher.digest.markdown import render_html, render_markdown
from watcher.digest.model import UNKNOWN_REGISTRY
from watcher.digest.slack import slack_messages
from watcher.digest.timeline import digest_timeline
from watcher.spec.view import fresh_spec_view

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
ALL_CLEAR = ("0 deprecated features", "0 in use", "none of the 0 deprecated", "no deprecated or removed features")


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        serve_spec(fake)
        yield fake


def _unreadable(gh: FakeGitHub) -> None:
    gh.fail_next(f"/raw/{REGISTRY_PATH}", status=503, times=50)
    gh.fail_next(f"/repos/{REPO}/releases", status=503, times=50)


@pytest.fixture
def config(gh: FakeGitHub, write_config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    server = {
        "name": "library",
        "team": "books",
        "sdk": "python",
        "language": "python",
        "path": ".",
        "transport": "stdio",
        "start": ["python", "-c", "pass"],
        "baseline_sdk_version": "2.3.0",
    }
    teams = [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"], "servers": ["library"]}]
    return write_config(
        {
            **spec_config(gh, teams=teams),
            "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
            "servers": [server],
        }
    )


def _no_all_clear(text: str, where: str) -> None:
    assert UNKNOWN_REGISTRY in text, f"{where}: {text[:400]}"
    for words in ALL_CLEAR:
        assert words not in text, f"{where} says {words!r}"


def test_every_rendering_says_unknown_when_the_registry_could_not_be_read(gh: FakeGitHub, config: Path):
    _unreadable(gh)
    loaded = load_config(config)
    store = Store(loaded.resolve(loaded.config.state))
    with clock_at(NOW):
        spec = fresh_spec_view(loaded.config, store, NOW.date(), NOW)
        digest = build_digest(loaded, store, "books", NOW.date(), spec=spec)
    store.close()
    assert digest.registry_unknown

    _no_all_clear(render_markdown(digest), "markdown")
    _no_all_clear(render_html(digest), "html")
    messages = slack_messages(digest)
    _no_all_clear(messages[0].text, "the Slack message's text (what the console prints)")
    _no_all_clear(json.dumps([m.blocks for m in messages]), "the Slack blocks")

    picture = digest_timeline(digest)
    assert picture.notice == UNKNOWN_REGISTRY, "the picture draws the unknown state"
    assert picture.bars == []


def test_the_console_digest_says_unknown(gh: FakeGitHub, config: Path, capsys: pytest.CaptureFixture[str]):
    _unreadable(gh)
    with clock_at(NOW):
        assert main(["--config", str(config), "digest", "--send", "--today", NOW.date().isoformat()]) == 0
    out = capsys.readouterr().out
    notice = out.split("--- notice for books → #books-mcp [digest:books:2026-W49]", 1)[1]
    first_line = notice.strip().splitlines()[0]
    _no_all_clear(first_line, "the console line")


def test_a_readable_registry_still_gets_its_counts(config: Path):
    loaded = load_config(config)
    store = Store(loaded.resolve(loaded.config.state))
    with clock_at(NOW):
        spec = fresh_spec_view(loaded.config, store, NOW.date(), NOW)
        digest = build_digest(loaded, store, "books", NOW.date(), spec=spec)
    store.close()
    assert not digest.registry_unknown
    text = render_markdown(digest)
    assert UNKNOWN_REGISTRY not in text and "deprecated features, 0 in use by this team's servers" in text
    assert digest_timeline(digest).notice is None
