"""The service's own parts read the one live configuration: a server committed to a team file is, after the next
sync pass of the service, on the pages (matrix, server set, readiness), in the digest the service sends, in
`readiness` and `status`, known to the pre-builder and run (its first run passes, its onboarding message says
so); a change of its definition is an event; when the file drops it, it is retired: its runs are kept, it leaves
the matrix, the digest and readiness, and the page lists it as retired. Each change is logged once and shown on
`/`, in `/api/status` and in `status`. Real git repositories, real runs of a stdlib MCP server, the clock pinned."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.digest.helpers import clock_at
from tests.helpers import run_cli
from tests.repos.helpers import change
from tests.serverset.helpers import add_server, baseline_snapshot, server_entry, team_file, team_repo, world
from watcher.config import load_config, open_state
from watcher.core import clock
from watcher.ops.health import Readiness, build_app
from watcher.readiness.cycle import update_windows
from watcher.service import Service
from watcher.spec.revisions import SpecRevision
from watcher.suites.build.prebuild import Prebuilder
from watcher.web.access import Access
from watcher.web.app import web_parts
from watcher.web.context import WebContext

pytestmark = [pytest.mark.timeout(300)]
MONDAY = "2026-11-30T10:00:00Z"
"""An hour after the default digest time (Monday 09:00 UTC): the service's digest job finds the digest due."""
RC = SpecRevision("2027-03-30-RC", "2027-03-30", date(2026, 11, 20), prerelease=True)
"""A spec release candidate: its revision's readiness window is open, and readiness lists every server for it."""


@pytest.fixture(autouse=True)
def _pinned_clock() -> Iterator[None]:
    with clock_at(datetime.fromisoformat(MONDAY)):
        yield


def matrix(api: dict[str, Any]) -> set[str]:
    return {row["server"] for m in api["matrices"] for team in m["teams"] for row in team["servers"]}


def readiness_servers(api: dict[str, Any]) -> set[str]:
    return {s["server"] for revision in api["readiness"] for s in revision["servers"]}


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    # Taken before the test's body: the snapshot command sets up the process's logging, which would drop the
    # handler caplog reads in the body (the log assertions below would then see nothing).
    return baseline_snapshot(tmp_path / "baseline")


def test_a_team_files_server_reaches_every_part_of_the_service_and_is_retired_when_dropped(
    tmp_path: Path, snapshot: Path, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.INFO, logger="watcher")
    with world(tmp_path) as w:
        repo = team_repo(tmp_path / "books-repo", snapshot, ("shelf", "find_book"))
        path = w.config([{"git": str(repo), "team": "books"}])
        loaded = load_config(path)
        store = open_state(loaded)
        service = Service(loaded, store)
        builder = Prebuilder(service.live, service.stop)
        service.prebuilder = builder
        pages = WebContext(service.live, store, now=clock.now)
        app = build_app(Readiness(store, 60, clock.now(), lambda: True), *web_parts(pages, Access(None, False)))
        try:
            service.keeper.refresh()  # the start: the set recorded
            service.sync_repos()  # the first pass: shelf, a repository seen for the first time
            update_windows(store, [RC])  # what the spec poll does when it reads an RC
            with TestClient(app) as client:
                assert matrix(client.get("/api/status").json()) == {"shelf"}

                # A second server committed; the service's next sync pass puts it in force everywhere.
                add_server(repo, "stacks", snapshot)
                both = team_file(server_entry("shelf", "find_book"), server_entry("stacks", "find_book"))
                change(repo, {".mcp-watcher.yaml": both})
                service.sync_repos()
                api = client.get("/api/status").json()
                assert matrix(api) == {"shelf", "stacks"}
                assert readiness_servers(api) == {"shelf", "stacks"}
                [appeared] = [c for c in api["server_set"]["changes"] if c["server"] == "stacks"]
                assert appeared["kind"] == "appeared" and ".mcp-watcher.yaml line " in appeared["text"]
                page = client.get("/").text
                assert page.count('data-change="appeared" data-server="stacks"') == 1
                # The pre-builder reads the same live configuration: it knows stacks (a team file's server is
                # built by its run, from the commit it checks out, so there is nothing to pre-build for it).
                placed = builder.loaded.config.server("stacks")
                assert placed.source is not None and placed.source.git == str(repo)
                assert builder.submit("stacks", "2.3.0") is False
                assert not [r for r in caplog.records if "no such server is configured" in r.getMessage()]

                # Its first run, by the service's worker; then the digest the service's own job sends.
                service.run_suites()
                [run] = store.runs(server="stacks")
                assert (run["status"], run["sdk_version"], run["verdict"]) == ("done", "2.3.0", "pass")
                # The repository's one onboarding message covers its first look (shelf); stacks, added since,
                # has its own message with its own first verdict.
                [first_look] = [r["text"] for r in store.outbox() if r["kind"] == "repo-onboarding"]
                assert "• shelf: " in first_look and "stacks" not in first_look
                [welcome] = [r["text"] for r in store.outbox() if r["kind"] == "server-onboarding"]
                assert welcome.startswith("mcp-watcher now watches stacks too") and "first run: pass" in welcome
                service.send_digest()
                digest = " ".join(
                    r["text"] + json.dumps(r["blocks"]) for r in store.outbox() if r["key"].startswith("digest:books:")
                )
                assert "stacks" in digest and "shelf" in digest
                offline = run_cli(path, "readiness", "--offline", "--today", "2026-11-30")
                assert "  stacks (books): " in offline.stdout, offline.stdout + offline.stderr

                # Its definition changed in the file: one event naming what changed; a commit that only moves the
                # repository's head redefines nobody (shelf has its appearance only).
                slower = server_entry("stacks", "find_book").replace("start: 30", "start: 45")
                change(repo, {".mcp-watcher.yaml": team_file(server_entry("shelf", "find_book"), slower)})
                service.sync_repos()
                api = client.get("/api/status").json()
                [redefined] = [c for c in api["server_set"]["changes"] if c["kind"] == "redefined"]
                assert redefined["server"] == "stacks" and "timeouts" in redefined["text"], redefined
                assert client.get("/").text.count('data-change="redefined" data-server="stacks"') == 1

                # The file drops it: retired; its run is kept, it leaves the matrix and readiness, listed as retired.
                change(repo, {".mcp-watcher.yaml": team_file(server_entry("shelf", "find_book"))})
                service.sync_repos()
                api = client.get("/api/status").json()
                assert matrix(api) == {"shelf"} and readiness_servers(api) == {"shelf"}
                assert [r["server"] for r in api["server_set"]["retired"]] == ["stacks"]
                assert [c["kind"] for c in api["server_set"]["changes"] if c["server"] == "stacks"] == [
                    "retired",
                    "redefined",
                    "appeared",
                ]
                assert [c["kind"] for c in api["server_set"]["changes"] if c["server"] == "shelf"] == ["appeared"]
                page = client.get("/").text
                assert page.count('data-retired="stacks"') == 1
                assert page.count('data-change="retired" data-server="stacks"') == 1
                assert 'data-server="stacks"' not in page.split('<ul class="plain changes">')[0]  # not in the matrix
                assert [r["id"] for r in store.runs(server="stacks")] == [run["id"]]
        finally:
            builder.shutdown()
            store.close()
        status = run_cli(path, "status")
        assert "retired: stacks (books, from " in status.stdout, status.stdout + status.stderr
        assert status.stdout.count("server stacks (team books) appeared") == 1
    lines = [r.getMessage() for r in caplog.records if r.name == "watcher.serverset.changes"]
    assert sum("server stacks (team books) appeared" in line for line in lines) == 1
    assert sum("server stacks (team books) retired" in line for line in lines) == 1
    assert sum("server stacks (team books) redefined" in line for line in lines) == 1
    assert len(lines) >= 4  # the log was read: the set recorded, shelf and stacks appeared, stacks retired
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR], "no traceback, no error"
