"""A source in `/api/status`: `status --json`'s figures of it (`source_json`), its age right after `last_poll`,
and its error as the page shows it (cleaned) in place of the figures' own."""

from __future__ import annotations

import json

from watcher.ops.figures import SourceFigures
from watcher.ops.status import source_json
from watcher.web.overview import SourceStatus


def test_a_source_as_json_is_its_status_figures_with_its_age_after_the_last_poll():
    figures = SourceFigures(
        name="python",
        kind="sdk",
        registry="pypi",
        package="mcp",
        last_poll="2026-11-30T08:00:00Z",
        ok=False,
        error="HTTP 503 from registry.example\n<b>busy</b>",
        newest_stable="1.26.0",
        newest_prerelease="2.0.0rc1",
        older_prerelease=None,
        versions_seen=41,
    )
    shown = SourceStatus(figures, "2 hours", "HTTP 503 from the registry").as_json()
    status = list(source_json(figures))
    assert list(shown) == status[: status.index("last_poll") + 1] + ["age"] + status[status.index("last_poll") + 1 :]
    assert shown["age"] == "2 hours" and shown["error"] == "HTTP 503 from the registry"
    assert {k: v for k, v in shown.items() if k not in ("age", "error")} == {
        k: v for k, v in source_json(figures).items() if k != "error"
    }
    assert json.loads(json.dumps(shown)) == shown
