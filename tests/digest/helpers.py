"""A fixed state for digest tests: config, spec registry (as poll_spec keeps it), runs, releases, outbox.

Everything is written through the Store's own methods and the spec's own parser and calculator; the only
direct table write pins the ``created`` time of events and outbox rows to fixed moments, so that the
"since the last digest" windows do not depend on the clock of the machine running the tests.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import yaml

from watcher.config import LoadedConfig, load_config
from watcher.core import clock
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.core.timefmt import iso
from watcher.digest import commands as digest_commands
from watcher.spec.calendar import ReleaseCalendar
from watcher.spec.notices import Change
from watcher.spec.registry import parse_registry
from watcher.spec.removal import compute_deprecations
from watcher.spec.revisions import SpecRevision
from watcher.spec.watch import KV_LAST_GOOD, KV_REVISIONS

TODAY = date(2026, 11, 30)  # a Monday
DIGEST_NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
SPEC_SAVED = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
"""When the seeded spec copy was saved: within ``spec_poll_minutes`` (360) of DIGEST_NOW, so the digest
command uses it without reading the spec (the tests stay off the network)."""

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The registry page in the spec's format: both tables, the three earliest-removal shapes of today's real
# registry, links and inline code in cells, and one Removed row.
REGISTRY = (FIXTURES / "registry.mdx").read_text(encoding="utf-8")

SPEC_RELEASES = [
    SpecRevision("2024-11-05", "2024-11-05", date(2024, 11, 5), False),
    SpecRevision("2025-03-26", "2025-03-26", date(2025, 3, 26), False),
    SpecRevision("2025-06-18", "2025-06-18", date(2025, 6, 18), False),
    SpecRevision("2025-11-25", "2025-11-25", date(2025, 11, 25), False),
    SpecRevision("2026-07-28-RC", "2026-07-28", date(2026, 5, 29), True),
    SpecRevision("2026-07-28", "2026-07-28", date(2026, 7, 28), False),
]

LOGGING_WARNING = "The logging capability is deprecated as of 2026-07-28 (SEP-2577)."


def server(name: str, sdk: str, language: str = "python", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "team": "books",
        "sdk": sdk,
        "language": language,
        "path": f"servers/{name}",
        "start": ["python", "-m", name, "--port", "{port}"],
        "baseline_sdk_version": "2.3.0",
        **extra,
    }


def config_dict(
    tmp_path: Path,
    slack_api_url: str | None = None,
    extra_servers: int = 0,
    spec: dict[str, Any] | None = None,
    **digest: Any,
) -> dict[str, Any]:
    extra = [server(f"branch-{n:02d}", "python", baseline_snapshot="snapshots/library") for n in range(extra_servers)]
    return {
        "state": str(tmp_path / "state" / "watcher.db"),
        "sdks": [
            {"name": "python", "registry": "pypi", "package": "mcp"},
            {"name": "typescript", "registry": "npm", "package": "@modelcontextprotocol/sdk"},
            {"name": "go", "registry": "goproxy", "package": "github.com/modelcontextprotocol/go-sdk"},
        ],
        "teams": [
            {"name": "books", "slack_channel": "#books-mcp", "sdks": ["python", "typescript"]},
            {"name": "infra", "slack_channel": "#infra-mcp", "sdks": ["go"], "digest": False},
        ],
        "servers": [
            server("library", "python", baseline_snapshot="snapshots/library"),
            server("catalog", "typescript", language="typescript", http_path="/sse"),
            server("shelf", "python", baseline_snapshot="snapshots/shelf"),
            *extra,
        ],
        "digest": {"day_of_week": "mon", "hour": 9, "minute": 0, "timezone": "UTC", **digest},
        "slack": {"api_url": slack_api_url, "retries": 1, "timeout_seconds": 5},
        "spec": spec or {},
        "http_client": {"retries": 0, "backoff_seconds": 0, "timeout_seconds": 5},
    }


def write_config(
    tmp_path: Path,
    slack_api_url: str | None = None,
    extra_servers: int = 0,
    spec: dict[str, Any] | None = None,
    **digest: Any,
) -> LoadedConfig:
    (tmp_path / "state").mkdir(parents=True, exist_ok=True)  # a configured state's folder must exist
    path = tmp_path / "watcher.yaml"
    data = config_dict(tmp_path, slack_api_url, extra_servers, spec, **digest)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_config(path, base_dir=tmp_path)


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


def write_snapshot(folder: Path, capabilities: dict[str, Any]) -> None:
    """A contract snapshot in the layout watcher/contract writes: DIR/legacy and DIR/modern."""
    for era, version in (("legacy", "2025-11-25"), ("modern", "2026-07-28")):
        write_json(
            folder / era / "server.json",
            {"era": era, "status": "ok", "protocolVersion": version, "capabilities": capabilities},
        )
        write_json(folder / era / "tools.json", [{"name": "find_book", "inputSchema": {"type": "object"}}])


def write_conformance_results(run_dir: Path, revision: str, scenarios: dict[str, str]) -> None:
    """checks.json files as the conformance suite's ``-o DIR`` writes them: one folder per scenario."""
    for scenario, status in scenarios.items():
        folder = run_dir / "conformance" / revision / "results" / f"server-{scenario}-2026-11-26T10-00-00-000Z"
        write_json(folder / "checks.json", [{"id": scenario, "name": scenario, "status": status}])


def pin_created(store: Store, table: str, key: str, when: datetime) -> None:
    rows = list(store.db.query(f"select id from {table} where key = ?", [key]))
    assert rows, f"no {table} row with key {key}"
    store.db[table].update(rows[0]["id"], {"created": iso(when)})


def seed_spec(store: Store, loaded: LoadedConfig, registry_text: str = REGISTRY, today: date = TODAY) -> list[dict]:
    """Keep the registry and releases in the kv exactly as a successful poll_spec leaves them."""
    registry = parse_registry(registry_text, "deprecated.mdx")
    calendar = ReleaseCalendar.from_settings(loaded.config.spec.calendar)
    finals = {int(k): v for k, v in loaded.config.spec.sep_final.items()}
    rows = compute_deprecations(registry, calendar, SPEC_RELEASES, finals, today)
    store.set_kv(
        KV_LAST_GOOD,
        {
            "registry": registry.to_json(),
            "computed": {row["key"]: row for row in rows},
            "generation": 1,
            "saved": iso(SPEC_SAVED),
        },
    )
    store.set_kv(KV_REVISIONS, [r.to_json() for r in SPEC_RELEASES])
    return rows


def add_release(store: Store, sdk: str, registry: str, package: str, version: str, prerelease: bool, seen: datetime):
    payload = {
        "sdk": sdk,
        "registry": registry,
        "package": package,
        "version": version,
        "prerelease": prerelease,
        "yanked": False,
        "published": iso(seen),
        "first_seen": iso(seen),
    }
    key = f"release:{sdk}:{version}"
    assert store.add_event(key, "release", payload)
    pin_created(store, "events", key, seen)


def finish_run(store: Store, server_name: str, sdk: str, version: str, verdict: str, report: dict[str, Any]) -> int:
    """Queue, claim and finish one run the way the worker does (other queued runs stay queued)."""
    assert store.queue_run(server_name, sdk, version, f"release:{sdk}:{version}")
    while (claimed := store.claim_run()) is not None and claimed["key"] != f"{server_name}@{version}":
        pass
    assert claimed is not None
    store.finish_run(claimed["id"], verdict, report, 42.0)
    store.requeue_interrupted()  # the runs claimed on the way go back to the queue
    return int(claimed["id"])


@dataclass
class FixedState:
    loaded: LoadedConfig
    store: Store
    rows: list[dict]
    tmp_path: Path
    library_run_dir: Path


def big_registry(features: int, long_migration: str) -> str:
    """REGISTRY with ``features`` more deprecated rows, the first of them with a very long migration path."""
    head, removed = REGISTRY.split("\n## Removed\n")
    rows = [
        f"| Feature number {n:03d} | SEP-{3000 + n} | `2026-07-28` | "
        f"{long_migration if n == 0 else f'Use the replacement number {n:03d}'} | "
        "First revision released on or after 2027-07-28 |"
        for n in range(features)
    ]
    return head.rstrip("\n") + "\n" + "\n".join(rows) + "\n\n## Removed\n" + removed


def build_state(
    tmp_path: Path,
    slack_api_url: str | None = None,
    registry: str = REGISTRY,
    extra_servers: int = 0,
    **digest: Any,
) -> FixedState:
    loaded = write_config(tmp_path, slack_api_url, extra_servers, **digest)
    store = Store(loaded.resolve(loaded.config.state))
    rows = seed_spec(store, loaded, registry)

    # Snapshots: library declares logging (a deprecated capability); shelf only tools.
    write_snapshot(tmp_path / "snapshots" / "library", {"logging": {}, "tools": {"listChanged": True}})
    write_snapshot(tmp_path / "snapshots" / "shelf", {"tools": {}})

    # A spec change recorded by the spec watcher during the week (the way poll_spec records it).
    roots = next(r for r in rows if r["feature"] == "Roots")
    before = {**roots, "earliest_removal": "2027-03-30", "days_left": 120}
    key = "spec:registry:g2:earliest-removal-changed:roots"
    change = Change("earliest-removal-changed", "Roots", before, roots, key)
    store.add_event(change.key, f"spec-{change.kind}", change.to_json())
    pin_created(store, "events", change.key, datetime(2026, 11, 25, 6, 0, tzinfo=UTC))
    old = Change("new-rc", "2026-07-28-RC", None, SPEC_RELEASES[4].to_json(), "spec:new-rc:2026-07-28-RC")
    store.add_event(old.key, f"spec-{old.kind}", old.to_json())
    pin_created(store, "events", old.key, datetime(2026, 5, 29, 18, 0, tzinfo=UTC))  # long before the period

    # Releases of the period (and one before it, one of another team's SDK).
    add_release(store, "python", "pypi", "mcp", "2.4.0b1", True, datetime(2026, 11, 26, 8, 0, tzinfo=UTC))
    add_release(
        store,
        "typescript",
        "npm",
        "@modelcontextprotocol/sdk",
        "2.0.0-beta.3",
        True,
        datetime(2026, 11, 27, 8, 0, tzinfo=UTC),
    )
    add_release(store, "python", "pypi", "mcp", "2.3.1", False, datetime(2026, 11, 28, 8, 0, tzinfo=UTC))
    add_release(store, "python", "pypi", "mcp", "2.3.0", False, datetime(2026, 11, 10, 8, 0, tzinfo=UTC))
    add_release(store, "go", "goproxy", "github.com/modelcontextprotocol/go-sdk", "v1.6.0-pre.1", True, DIGEST_NOW)

    # The beta alert for mcp 2.4.0b1 went out to Slack: its thread is known.
    alert = "release:python:2.4.0b1:books"
    store.enqueue(Notice(alert, "books", "#books-mcp", "release", "New pre-release: mcp 2.4.0b1", []))
    row = store.outbox_row(alert)
    assert row is not None
    store.update_outbox(row["id"], status="sent", slack_channel="C00000001", slack_ts="1764144000.000200")

    # library ran against 2.4.0b1: logging deprecation warnings, a sampling scenario passed.
    run_dir = tmp_path / "state" / "runs" / "library" / "20261126T090000Z-2.4.0b1-abcd"
    scenarios = {"tools-call-sampling": "SUCCESS", "tools-list": "SUCCESS", "server-sse-polling": "SUCCESS"}
    write_conformance_results(run_dir, "2026-07-28", scenarios)
    report = {
        "server": "library",
        "sdk": "python",
        "sdk_version": "2.4.0b1",
        "verdict": "pass",
        "reasons": [],
        "run_dir": str(run_dir),
        "conformance": [{"requirements": "2026-07-28", "ok": True, "unscored": []}],
        "deprecation_warnings": [
            {"kind": "MCPDeprecationWarning", "message": LOGGING_WARNING, "count": 3, "runtime": "python"}
        ],
    }
    finish_run(store, "library", "python", "2.4.0b1", "pass", report)
    # catalog's run against the TypeScript beta is still queued: its verdict is pending.
    assert store.queue_run("catalog", "typescript", "2.0.0-beta.3", "release:typescript:2.0.0-beta.3")
    return FixedState(loaded, store, rows, tmp_path, run_dir)


@contextmanager
def clock_at(moment: datetime) -> Iterator[None]:
    """The watcher's clock (watcher.core.clock) starts at ``moment`` for the duration."""
    before = os.environ.get(clock.START_VARIABLE)
    os.environ[clock.START_VARIABLE] = moment.isoformat()
    clock._offset.cache_clear()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(clock.START_VARIABLE, None)
        else:
            os.environ[clock.START_VARIABLE] = before
        clock._offset.cache_clear()


def cli(argv: list[str], now: datetime = DIGEST_NOW) -> int:
    """``mcp-watcher … digest …`` through the command's own register(), as watcher/cli.py wires it, with the
    watcher's clock at ``now``."""
    parser = argparse.ArgumentParser(prog="mcp-watcher")
    parser.add_argument("--config")
    digest_commands.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    with clock_at(now):
        return int(args.handler(args))
