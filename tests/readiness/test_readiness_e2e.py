"""End to end: a new conformance-suite version published on the loopback npm registry (a real tarball made with
`npm pack` from the pinned suite, plus `requirements/draft.yaml`), polled, installed, read, and run against
every server on the real CLI; then the per-server list, the digest line, the team's thread and the page.

One real suite run (the Python example server); the TypeScript server's SDK has no known version, so it is
listed as not yet testable without a run. The clock is pinned: the next projected revision is 2027-03-30."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import yaml
from starlette.testclient import TestClient

from tests.fakes.registry_server import FakeRegistry, serve_registry
from tests.readiness.helpers import known_sdk, pack_suite, publish
from tests.suites.helpers import CONFORMANCE, ROOT, library_server, library_ts_server
from watcher.boundary import sandbox
from watcher.config import LoadedConfig, load_config
from watcher.core.clock import START_VARIABLE
from watcher.core.store import Store
from watcher.digest.build import build_digest
from watcher.digest.markdown import render_markdown
from watcher.ops.health import Readiness as ServiceReadiness
from watcher.ops.health import build_app
from watcher.readiness.cycle import check_readiness
from watcher.readiness.suite import SUITE_SOURCE
from watcher.readiness.view import KV_RESULTS, collect_readiness, digest_line
from watcher.suites.judge.conformance import ensure_conformance
from watcher.web.access import Access
from watcher.web.app import web_parts
from watcher.web.context import WebContext

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("readiness-e2e"), pytest.mark.timeout(600)]
TODAY = date(2026, 12, 1)
PINNED = CONFORMANCE.rsplit("@", 1)[1]
NEW = "0.2.0-alpha.13"


@pytest.fixture(scope="module")
def tarballs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The pinned suite repacked unchanged, and a new version with `draft.yaml` (a copy of 2026-07-28.yaml)."""
    work = tmp_path_factory.mktemp("suite-pack")
    pinned = ensure_conformance(CONFORMANCE, work / "_tools", boundary=sandbox.choose("auto"), timeout=600)
    return {
        PINNED: pack_suite(pinned, PINNED, work),
        NEW: pack_suite(pinned, NEW, work, {"draft": "2026-07-28"}),
    }


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[FakeRegistry]:
    with serve_registry(tmp_path / "registry") as served:
        yield served


def config(folder: Path, registry: FakeRegistry) -> LoadedConfig:
    data = {
        "state": str(folder / "state" / "watcher.db"),
        "sdks": [
            {"name": "python", "registry": "pypi", "package": "mcp"},
            {"name": "typescript", "registry": "npm", "package": "@modelcontextprotocol/sdk"},
        ],
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python", "typescript"]}],
        "conformance": {"package": CONFORMANCE, "npm_registry": registry.base},
        # No sets of their own here: only the new set runs (the candidate comparison has its own test).
        "servers": [library_server(requirements=[]), library_ts_server(requirements=[])],
        "suites": {"runs_dir": str(folder / "runs"), "envs_dir": str(folder / "envs")},
    }
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_config(path, base_dir=ROOT)


def test_new_suite_version_starts_readiness_runs_for_every_server(
    tmp_path: Path, tarballs: dict[str, Path], registry: FakeRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(START_VARIABLE, "2026-12-01T09:00:00Z")
    root = registry.root
    publish(root, {PINNED: (tarballs[PINNED], "2026-11-01T10:00:00.000Z")}, PINNED)
    loaded = config(tmp_path, registry)
    store = Store(loaded.resolve(loaded.config.state))
    known_sdk(store, "2.3.0")

    first = check_readiness(loaded, store, today=TODAY)
    assert first["ok"], first
    assert first["suite_version"] == PINNED
    assert first["sets"] == {}  # the pinned suite's sets are released revisions: nothing to get ready for
    assert store.get_kv(KV_RESULTS) is None

    publish(
        root,
        {PINNED: (tarballs[PINNED], "2026-11-01T10:00:00.000Z"), NEW: (tarballs[NEW], "2026-11-30T10:00:00.000Z")},
        NEW,
    )
    os.utime(root / "@modelcontextprotocol" / "conformance.json")
    second = check_readiness(loaded, store, today=TODAY)
    assert second["suite_version"] == NEW
    assert second["sets"] == {"draft": "2027-03-30"}  # draft counts toward the next projected revision
    assert sorted(r["server"] for r in second["runs"]) == ["library", "library-ts"]

    results = store.get_kv(KV_RESULTS)["draft"]
    assert results["revision"] == "2027-03-30"
    library = results["servers"]["library"]
    assert library["sdk_version"] == "2.3.0" and library["suite_version"] == NEW
    draft_file = yaml.safe_load((tarballs[NEW].parent / f"pkg-{NEW}" / "requirements" / "draft.yaml").read_text())
    assert library["scenarios"] == len(draft_file["server"])  # judged against the set's own list
    assert library["status"] in ("ready", "to_fix")
    assert library["passed"] == library["scenarios"] - len(library["to_fix"])
    for item in library["to_fix"]:
        assert item["scenario"] in draft_file["server"] and item["checks"]
        assert all(link.startswith("https://") for link in item["spec"])
    report_dir = Path(library["run_dir"])
    assert (report_dir / "step" / "results").is_dir()
    assert results["servers"]["library-ts"]["status"] == "not_testable"
    assert "no typescript SDK version" in results["servers"]["library-ts"]["reason"]

    [revision] = collect_readiness(loaded.config, store, TODAY)
    assert (revision.revision, revision.days_left) == ("2027-03-30", 119)
    fix = len(library["to_fix"])
    expected = f"Ready for 2027-03-30: {int(not fix)} of 2 servers; yours: " + (f"{fix} to fix" if fix else "ready")
    if fix:
        expected += ", 1 not yet testable"
    assert digest_line(revision, "books") == expected

    digest = build_digest(loaded, store, "books", TODAY)
    assert digest.readiness == [f"{expected} (projected release 2027-03-30, in 119 days)"]
    assert f"**Readiness:** {expected}" in render_markdown(digest)

    notices = [r for r in store.outbox() if r["kind"] == "readiness"]
    assert [n["key"] for n in notices] == ["readiness:2027-03-30:books"]
    assert "library" in notices[0]["text"] and "not yet testable" in notices[0]["text"]

    # The page: its own view with the per-server list, a line on `/`, and the same figures in /api/status.
    ctx = WebContext(loaded, store, now=lambda: datetime(2026, 12, 1, 9, 0, tzinfo=UTC))
    app = build_app(ServiceReadiness(store, 30, ctx.now(), lambda: True), *web_parts(ctx, Access(None, False)))
    with TestClient(app) as client:
        view = client.get("/readiness").text
        index = client.get("/").text
        api = client.get("/api/status").json()
    assert 'data-server="library" data-status="' + library["status"] in view
    assert 'data-server="library-ts" data-status="not_testable"' in view
    assert "Projected release 2027-03-30 (in 119 days)" in view
    for item in library["to_fix"]:
        assert item["scenario"] in view
    assert f"Ready for 2027-03-30: {int(not fix)} of 2 servers" in index
    [shown] = api["readiness"]
    figures = (shown["revision"], shown["ready"], shown["total"], shown["days_left"])
    assert figures == ("2027-03-30", int(not fix), 2, 119)
    statuses = {s["server"]: s["status"] for s in shown["servers"]}
    assert statuses == {"library": library["status"], "library-ts": "not_testable"}

    # The same suite and SDK again: a conditional poll, no run, nothing new for the team.
    third = check_readiness(loaded, store, today=TODAY)
    assert third["runs"] == [] and third["sets"] == {"draft": "2027-03-30"}
    assert store.source_polls(SUITE_SOURCE) is not None
    assert registry.stats.not_modified >= 1
    assert len([r for r in store.outbox() if r["kind"] == "readiness"]) == 1
