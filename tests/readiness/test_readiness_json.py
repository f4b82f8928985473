"""`readiness --json` and `/api/status`'s readiness: a revision's fields in their order, its servers' fields and
label, then the count of ready servers out of all (written out typed, `RevisionJson`)."""

from __future__ import annotations

import json
from dataclasses import asdict, fields

from watcher.readiness.view import RevisionReadiness, ServerReadiness

FIX = {"scenario": "tools-call-error", "checks": ["isError"], "message": "no isError", "spec": ["https://spec/x"]}


def test_a_revision_as_json_is_its_fields_in_order_with_each_label_and_the_counts():
    revision = RevisionReadiness(
        revision="2026-07-28",
        release="2026-07-28",
        days_left=12,
        sets=["2026-07-28"],
        opened_by="2026-07-28-RC1",
        servers=[
            ServerReadiness("books", "books", "to_fix", [dict(FIX)], "1.26.0", "0.3.0"),
            ServerReadiness("maps", "geo", "ready", [], "2.0.0", "0.3.0"),
            ServerReadiness("mail", "post", "not_testable", [], None, None, reason="no set for it yet"),
        ],
    )
    shown = revision.to_json()
    assert list(shown) == [f.name for f in fields(RevisionReadiness)] + ["ready", "total"]
    assert (shown["ready"], shown["total"]) == (1, 3)
    assert [s["label"] for s in shown["servers"]] == ["1 to fix", "ready", "not yet testable"]
    for entry, server in zip(shown["servers"], revision.servers, strict=True):
        assert list(entry) == [f.name for f in fields(ServerReadiness)] + ["label"]
        assert {k: v for k, v in entry.items() if k != "label"} == asdict(server)
    [fix] = shown["servers"][0]["to_fix"]
    assert fix == FIX and fix is not revision.servers[0].to_fix[0]  # a copy: the JSON never aliases the view
    assert json.loads(json.dumps(shown)) == shown  # plain JSON values only
