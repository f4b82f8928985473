"""The typed release event (watcher.sources.events): the rows main e8aec50 stored load, and the poll stores the
same rows and notices as it did (tests/fixtures/releases_e8aec50/, real rows made by that release)."""

from __future__ import annotations

import importlib.util
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from watcher.core import clock
from watcher.core.store import Store
from watcher.core.timefmt import parse_iso
from watcher.digest.sections.releases import releases_of_period
from watcher.sources.events import ReleaseEvent, StoredEventError

STORED = Path(__file__).resolve().parents[1] / "fixtures" / "releases_e8aec50"
STORED_AT = datetime(2026, 8, 3, 9, 0, 1, tzinfo=UTC)
"""The one moment in every stored row (see the fixtures' README)."""


def stored(name: str) -> list[dict]:
    return json.loads((STORED / name).read_text())


def test_every_release_event_stored_by_e8aec50_loads_and_is_stored_again_as_the_same_json():
    events = stored("events.json")
    assert len(events) == 12 and {e["kind"] for e in events} == {"release"}
    for row in events:
        event = ReleaseEvent.stored(row["key"], json.loads(row["payload"]))
        assert row["key"] == f"release:{event.sdk}:{event.version}"
        assert event.registry == "pypi" and event.package == "mcp" and event.first_seen == row["created"]
        assert json.dumps(event.payload(), sort_keys=True, default=str) == row["payload"]  # Store.add_event's form
    assert ReleaseEvent.stored("k", json.loads(events[0]["payload"])).prerelease is True


def test_the_versions_row_of_each_stored_event_is_the_row_e8aec50_stored():
    rows = {row["version"]: row for row in stored("versions.json")}
    for row in stored("events.json"):
        event = ReleaseEvent.stored(row["key"], json.loads(row["payload"]))
        assert event.version_row(baseline=False) == rows[event.version]
    baseline = [row for row in rows.values() if row["baseline"]]
    assert baseline and all(
        row["version"] not in {e["key"].split(":")[2] for e in stored("events.json")} for row in baseline
    )


def test_a_stored_payload_missing_a_field_is_refused_naming_the_event_and_the_field():
    payload = json.loads(stored("events.json")[0]["payload"])
    del payload["registry"]
    with pytest.raises(
        StoredEventError, match=r"stored release event release:python:2.0.0a1: registry: Field required"
    ):
        ReleaseEvent.stored("release:python:2.0.0a1", payload)
    with pytest.raises(StoredEventError, match=r"prerelease: Input should be a valid boolean"):
        ReleaseEvent.stored("k", {**json.loads(stored("events.json")[0]["payload"]), "prerelease": "perhaps"})


def test_the_digest_reads_the_events_e8aec50_stored(tmp_path, write_config):
    from watcher.config import load_config

    config = load_config(
        write_config(
            {
                "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
                "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
            }
        )
    ).config
    store = Store(tmp_path / "old.db")
    for row in stored("events.json"):
        store.db.table("events").insert(row)  # as e8aec50 left them: the payload column its JSON text
    items = releases_of_period(
        config, store, config.teams[0], ["python"], datetime(2026, 8, 1, tzinfo=UTC), datetime(2026, 8, 8, tzinfo=UTC)
    )
    assert [i.version for i in items] == [
        ReleaseEvent.stored("k", json.loads(r["payload"])).version for r in stored("events.json")
    ]
    assert all(i.registry == "pypi" and i.package == "mcp" and i.first_seen == "2026-08-03T09:00:01Z" for i in items)
    assert parse_iso(items[0].published) is not None and items[0].prerelease is True


def test_the_poll_stores_the_rows_and_notices_e8aec50_stored_byte_for_byte(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("make_fixtures", STORED / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    make_fixtures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_fixtures)
    monkeypatch.setattr(clock, "now", lambda: STORED_AT)
    make_fixtures.make(tmp_path)
    for name in ("events.json", "versions.json", "notices.json"):
        assert (tmp_path / name).read_text() == (STORED / name).read_text(), name


def test_a_payload_of_the_first_releases_with_the_versions_rows_baseline_in_it_loads():
    # Until the payload dropped it, the event was the versions row spread out: "baseline" was stored too (6a1c846).
    payload = {**json.loads(stored("events.json")[0]["payload"]), "baseline": 0}
    event = ReleaseEvent.stored("release:python:2.0.0a1", payload)
    assert event.version == "2.0.0a1" and "baseline" not in event.payload()
