"""`mcp-watcher status`, `/api/status` and `/` show the same figures (one function computes them), over a state
made by a real poll of the loopback registry (python: 2.0.0rc1 … 2.3.0) and of a path where it has nothing."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.fakes.registry_server import FIXTURES, serve_registry
from tests.reliability.conftest import python_only
from tests.web.helpers import NOW
from watcher.cli import main
from watcher.config import load_config
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.ops.health import Readiness, build_app
from watcher.web.access import Access
from watcher.web.app import web_parts
from watcher.web.context import WebContext

SPEC_ERROR = "cannot read the registry: connection refused"


class Figures(HTMLParser):
    """The page's figures: `data-figure` counts and the `data-source` rows of the sources table."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}
        self.sources: dict[str, dict[str, str]] = {}
        self._figure: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if "data-figure" in found:
            self._figure = found["data-figure"]
        if "data-source" in found:
            self.sources[found["data-source"]] = {k.removeprefix("data-"): v for k, v in found.items()}

    def handle_data(self, data: str) -> None:
        if self._figure is not None:
            self.counts[self._figure] = int(data)
            self._figure = None


@pytest.fixture
def registry():
    with serve_registry(FIXTURES) as server:
        yield server


@pytest.fixture
def state(registry, write_config, capsys, tmp_path: Path):
    data = python_only(registry)
    data["sdks"].append({"name": "typescript", "registry": "npm", "package": "@modelcontextprotocol/sdk"})
    data["sdks"][1]["url"] = registry.url("nowhere")  # the fake answers 404 there
    data["teams"][0]["sdks"] = ["python", "typescript"]
    config = write_config(data)
    assert main(["--config", str(config), "poll", "--no-deliver"]) == 3  # typescript's read fails
    capsys.readouterr()
    loaded = load_config(config)
    store = Store(loaded.resolve(loaded.config.state))
    store.record_poll("spec", "spec", NOW, False, SPEC_ERROR)  # what the service records for a failed spec read
    store.queue_run("library", "python", "2.3.0", "cli")
    store.queue_run("library", "python", "2.2.0", "manual")
    claimed = store.claim_run()
    assert claimed is not None
    store.enqueue(Notice("n:1", "books", "#books-mcp", "run", "text", []))
    store.enqueue(Notice("n:2", "books", "#books-mcp", "run", "text", []))
    failed = store.outbox_row("n:2")
    assert failed is not None
    store.update_outbox(failed["id"], status="failed", last_error="channel_not_found")
    return config, loaded, store


def test_status_the_api_and_the_page_agree_on_every_figure(state, capsys):
    config, loaded, store = state
    assert main(["--config", str(config), "status", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    ctx = WebContext(loaded, store, now=lambda: NOW)
    app = build_app(Readiness(store, 30, NOW, lambda: True), *web_parts(ctx, Access(None, False)))
    with TestClient(app) as client:
        api = client.get("/api/status").json()
        page = Figures()
        page.feed(client.get("/").text)

    # Python: the recorded page's newest pre-release, 2.0.0rc1, is older than 2.3.0: none is newer.
    python = next(s for s in cli["sources"] if s["sdk"] == "python")
    assert (python["newest_stable"], python["newest_prerelease"], python["older_prerelease"]) == (
        "2.3.0",
        None,
        "2.0.0rc1",
    )
    fields = ("ok", "last_poll", "newest_stable", "newest_prerelease", "older_prerelease", "versions_seen")
    for source in cli["sources"]:
        [shown] = [s for s in api["sources"] if s["sdk"] == source["sdk"]]
        assert {f: shown[f] for f in fields} == {f: source[f] for f in fields}, source["sdk"]
        row = page.sources[source["sdk"]]
        assert row["ok"] == str(source["ok"]).lower()
        for name in ("last_poll", "newest_stable", "newest_prerelease", "older_prerelease"):
            assert row[name.replace("_", "-")] == (source[name] or ""), (source["sdk"], name)
    typescript = next(s for s in cli["sources"] if s["sdk"] == "typescript")
    assert typescript["ok"] is False and typescript["error"]

    # The spec source's failure is in all three.
    assert cli["spec"]["ok"] is False and cli["spec"]["error"] == SPEC_ERROR
    assert api["spec_source"]["ok"] is False and api["spec_source"]["error"] == SPEC_ERROR
    assert page.sources["spec"]["ok"] == "false"
    assert api["sources_line"]["failing"] == 2 and api["sources_line"]["total"] == 3

    # Runs and the outbox.
    assert (cli["runs"]["queued_count"], cli["runs"]["running_count"]) == (1, 1)
    assert (api["runs"]["queued"], api["runs"]["running"]) == (1, 1)
    assert (page.counts["queued"], page.counts["running"]) == (1, 1)
    assert (cli["outbox"]["pending"], cli["outbox"]["failed"]) == (1, 1)
    assert (api["outbox"]["pending"], api["outbox"]["failed"]) == (1, 1)
    assert (page.counts["outbox-pending"], page.counts["outbox-failed"]) == (1, 1)


def test_status_prints_sources_once_with_the_spec_source(state, capsys):
    config, _, _ = state
    assert main(["--config", str(config), "status"]) == 0
    text = capsys.readouterr().out
    assert text.count("SOURCES") == 1
    [spec_line] = [line for line in text.splitlines() if SPEC_ERROR in line]
    assert "FAILED" in spec_line
