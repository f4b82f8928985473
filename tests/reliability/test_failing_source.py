"""Class 2: a source that keeps failing is one operator notice, one "recovered" notice, and the digest
says which sources it could not read — never "no news" for them."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from tests.reliability.conftest import python_only
from watcher.cli import main
from watcher.config import load_config
from watcher.core.store import Store
from watcher.core.timefmt import iso
from watcher.digest.build import build_digest
from watcher.polling.alerts import check_sources, unchecked_sources

T0 = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def record(store: Store, source: str, at: datetime, ok: bool, error: str | None = None) -> None:
    store.db["polls"].insert(
        {"source": source, "kind": "sdk", "started": iso(at), "finished": iso(at), "ok": int(ok), "error": error}
    )


def alerts(store: Store) -> list[str]:
    return [r["key"] for r in store.outbox() if r["kind"] == "source-health"]


def test_outage_longer_than_the_limit_is_one_notice_then_one_recovered(registry, write_config):
    loaded = load_config(write_config(python_only(registry, schedule={"source_alert_minutes": 60})))
    store = Store(loaded.resolve(loaded.config.state))
    record(store, "python", T0, True)
    for minutes in range(10, 130, 10):  # failing every 10 minutes for two hours
        at = T0 + timedelta(minutes=minutes)
        record(store, "python", at, False, "HTTP 503 Service Unavailable (after 1 attempts)")
        check_sources(store, loaded.config, now=at)
    since = iso(T0 + timedelta(minutes=10))
    assert alerts(store) == [f"source-down:python:{since}:#books-mcp"], "one notice, after 60 minutes"
    row = store.outbox_row(f"source-down:python:{since}:#books-mcp")
    assert "Every poll of python has failed since" in row["text"] and "HTTP 503" in row["text"]
    record(store, "python", T0 + timedelta(minutes=130), True)
    for minutes in (130, 140):
        check_sources(store, loaded.config, now=T0 + timedelta(minutes=minutes))
    assert alerts(store)[1:] == [f"source-recovered:python:{since}:#books-mcp"]


def test_short_failures_stay_quiet(registry, write_config):
    loaded = load_config(write_config(python_only(registry, schedule={"source_alert_minutes": 60})))
    store = Store(loaded.resolve(loaded.config.state))
    record(store, "python", T0, False, "timed out")
    record(store, "python", T0 + timedelta(minutes=30), True)
    check_sources(store, loaded.config, now=T0 + timedelta(minutes=90))
    assert alerts(store) == []


def test_cli_polls_against_a_failing_registry_alert_once(registry, write_config, capsys):
    config = write_config(python_only(registry, schedule={"source_alert_minutes": 0.0001}))
    registry.fail("/pypi/simple/mcp/", status=503)
    for _ in range(3):
        assert main(["--config", str(config), "poll"]) == 3
    store = Store(Path(config).parent / "state" / "watcher.db")
    (down,) = alerts(store)
    assert down.startswith("source-down:python:")
    registry.clear_faults()
    assert main(["--config", str(config), "poll"]) == 0
    assert [k.split(":")[0] for k in alerts(store)] == ["source-down", "source-recovered"]
    out = capsys.readouterr().out
    assert "python cannot be read" in out and "python can be read again" in out


def test_digest_names_the_sources_it_could_not_read(registry, write_config):
    loaded = load_config(write_config(python_only(registry)))
    store = Store(loaded.resolve(loaded.config.state))
    record(store, "python", T0 - timedelta(days=10), True)
    record(store, "python", T0 + timedelta(days=1), False, "HTTP 503 Service Unavailable")
    lines = unchecked_sources(store, loaded.config, ["python"], T0, T0 + timedelta(days=7))
    assert lines[0].startswith(f"python could not be read since {iso(T0 + timedelta(days=1))} (HTTP 503")
    digest = build_digest(loaded, store, "books", date(2026, 11, 30), until=T0 + timedelta(days=7), since=T0)
    assert any("python could not be read since" in p for p in digest.problems)
    assert digest.releases == []


def test_digest_names_a_source_that_was_not_polled_in_its_period(registry, write_config):
    loaded = load_config(write_config(python_only(registry)))
    store = Store(loaded.resolve(loaded.config.state))
    record(store, "python", T0 - timedelta(days=30), True)
    lines = unchecked_sources(store, loaded.config, ["python"], T0, T0 + timedelta(days=7))
    assert lines[0] == "python was not polled during this period: its releases are unknown, not absent."
    # A source read during the period adds nothing.
    record(store, "python", T0 + timedelta(days=2), True)
    assert unchecked_sources(store, loaded.config, ["python"], T0, T0 + timedelta(days=7)) == []
