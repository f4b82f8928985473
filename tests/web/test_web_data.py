"""The matrix's data: which versions are columns, each cell's state and age (with a fixed clock)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.suites.helpers import library_server
from tests.web.helpers import NOW
from watcher.config import load_config
from watcher.store import Store
from watcher.web.context import WebContext
from watcher.web.overview import collect_overview


def test_columns_cells_and_ages(tmp_path: Path):
    config = tmp_path / "watcher.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "state": str(tmp_path / "state.db"),
                "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
                "teams": [{"name": "books", "slack_channel": "#b"}, {"name": "maps", "slack_channel": "#m"}],
                "servers": [library_server(), library_server(name="atlas", team="maps")],
            }
        )
    )
    loaded = load_config(config)
    store = Store(tmp_path / "state.db")
    for version, pre, baseline in (("2.2.0", 0, 1), ("2.3.0", 0, 1), ("2.4.0a1", 1, 1), ("2.4.0b1", 1, 0)):
        row = {"sdk": "python", "registry": "pypi", "package": "mcp", "version": version, "prerelease": pre}
        store.db["versions"].insert({**row, "yanked": 0, "published": None, "first_seen": None, "baseline": baseline})
    store.queue_run("library", "python", "2.4.0b1", "release")
    store.queue_run("atlas", "python", "2.4.0b1", "release")
    store.queue_run("atlas", "python", "2.3.0", "baseline")
    store.queue_run("library", "python", "2.3.0", "baseline")
    first = store.claim_run()
    assert first is not None
    store.finish_run(first["id"], "fail", {"reasons": []}, 3.0)
    second = store.claim_run()
    assert second is not None
    store.interrupt_run(second["id"])
    times = {"queued": "2026-11-29T09:00:00Z", "started": "2026-11-29T11:00:00Z", "finished": "2026-11-28T12:00:00Z"}
    store.db.execute("update runs set queued = ?, started = ?, finished = ?", list(times.values()))

    overview = collect_overview(WebContext(loaded, store, now=lambda: NOW))
    [matrix] = overview.matrices
    # The baseline, the newest stable, and the pre-release first seen after the baseline; not 2.2.0 nor 2.4.0a1.
    assert [(c.version, c.roles) for c in matrix.columns] == [
        ("2.3.0", ["baseline", "newest stable", "tested"]),
        ("2.4.0b1", ["pre-release", "tested"]),
    ]
    cells = {(t.team, r.server): [(c.state, c.age) for c in r.cells] for t in matrix.teams for r in t.servers}
    assert cells == {
        ("books", "library"): [("queued", "3 h"), ("fail", "24 h")],
        ("maps", "atlas"): [("queued", "3 h"), ("interrupted", "24 h")],
    }
    assert [(r.server, r.state) for r in overview.queued] == [
        ("atlas", "interrupted"),
        ("atlas", "queued"),
        ("library", "queued"),
    ]
    assert overview.running == []
    assert overview.generated == "2026-11-29T12:00:00Z"
