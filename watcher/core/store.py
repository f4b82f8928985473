"""SQLite state through sqlite-utils: versions seen, polls, the HTTP cache, events, the outbox and suite runs.
Every SQL statement of the watcher lives here; the schema and the typed rows are in store_schema."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import sqlite_utils

from watcher.core import vault
from watcher.core.errors import SchemaTooNew
from watcher.core.run_report import RunReport
from watcher.core.secret_policy import masked_json
from watcher.core.state_check import StateError, check_state_file
from watcher.core.state_check import describe as describe_state_error
from watcher.core.store_backtests import BacktestTables
from watcher.core.store_clusters import ClusterTables
from watcher.core.store_decisions import DecisionTables
from watcher.core.store_schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    STATE_SQL,
    ActiveRun,
    EventRow,
    HttpCacheRow,
    LatestCell,
    Notice,
    OutboxBacklog,
    OutboxRow,
    PollCount,
    PollRow,
    RunCell,
    RunRow,
    RunTally,
    SourcePolls,
    StoredOutboxRow,
    VerdictFigures,
    VersionRow,
    run_row,
)
from watcher.core.timefmt import iso, parse_iso, utcnow

_PENDING = ("queued", "sending", "posted")


class _LockedDatabase(sqlite_utils.Database):
    """sqlite-utils on a connection that several threads share: every statement holds the store's lock.

    sqlite-utils wraps each read in a SAVEPOINT, which opens a transaction on the shared connection; a read
    from one thread while another starts `BEGIN IMMEDIATE` would fail ("cannot start a transaction within a
    transaction") or land inside the other's transaction. Reads are therefore fetched whole under the lock.
    """

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        self._store_lock = lock  # before super().__init__, which already executes statements
        super().__init__(conn)

    def query(
        self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None
    ) -> Generator[dict[Any, Any], None, None]:
        with self._store_lock:
            rows = list(super().query(sql, params))
        yield from rows

    def execute(self, sql: str, parameters: Sequence[Any] | dict[str, Any] | None = None) -> sqlite3.Cursor:
        with self._store_lock:
            return super().execute(sql, parameters)


class Store(ClusterTables, DecisionTables, BacktestTables):
    """The service's state. One instance per process; safe to share across threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._open(str(path))
        except (sqlite3.DatabaseError, OSError) as exc:  # bad state is a clear error, never a traceback
            raise StateError(describe_state_error(self.path, exc)) from exc

    def _open(self, path: str) -> None:
        if path != ":memory:":
            check_state_file(self.path)
            self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        self._lock = threading.RLock()
        self.db = _LockedDatabase(conn, self._lock)
        self.migrate()

    def close(self) -> None:
        self.db.conn.close()

    def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any]:
        """The one row of an aggregate query."""
        return next(iter(self.db.query(sql, params)))

    @property
    def schema_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> None:
        with self.transaction():
            current = self.schema_version
            if current > SCHEMA_VERSION:
                raise SchemaTooNew(
                    f"{self.path}: state schema {current} is newer than this mcp-watcher knows ({SCHEMA_VERSION})"
                )
            for number in range(current, SCHEMA_VERSION):
                MIGRATIONS[number](self.db)
                self.db.execute(f"PRAGMA user_version = {number + 1}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite_utils.Database]:
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    # --- key/value -------------------------------------------------------------------------------

    def get_kv(self, key: str, default: Any = None) -> Any:
        rows = list(self.db.query("select value from kv where key = ?", [key]))
        return json.loads(rows[0]["value"]) if rows else default

    def set_kv(self, key: str, value: Any) -> None:
        with self._lock:
            self.db.table("kv").upsert(
                {"key": key, "value": json.dumps(value, sort_keys=True), "updated": iso(utcnow())}, pk="key"
            )

    def delete_kv(self, key: str) -> None:
        with self._lock, self.db.conn:
            self.db.execute("delete from kv where key = ?", [key])

    # --- HTTP cache for conditional requests -------------------------------------------------------

    def http_cache_get(self, url: str) -> HttpCacheRow | None:
        rows = list(self.db.query("select url, etag, last_modified, body from http_cache where url = ?", [url]))
        return cast(HttpCacheRow, rows[0]) if rows else None

    def http_cache_put(self, url: str, etag: str | None, last_modified: str | None, body: bytes) -> None:
        with self._lock:
            self.db.table("http_cache").upsert(
                {"url": url, "etag": etag, "last_modified": last_modified, "body": body, "fetched": iso(utcnow())},
                pk="url",
            )

    # --- versions ----------------------------------------------------------------------------------

    def known_versions(self, sdk: str, package: str) -> set[str]:
        return {
            r["version"]
            for r in self.db.query("select version from versions where sdk = ? and package = ?", [sdk, package])
        }

    def has_versions(self, sdk: str) -> bool:
        return bool(list(self.db.query("select 1 from versions where sdk = ? limit 1", [sdk])))

    def versions_of(self, sdk: str) -> list[VersionRow]:
        rows = self.db.query("select * from versions where sdk = ? order by first_seen, version", [sdk])
        return [cast(VersionRow, row) for row in rows]

    def is_prerelease(self, sdk: str, version: str) -> bool | None:
        """Whether a version the watcher recorded is a pre-release (None: a version it never saw)."""
        query = "select prerelease from versions where sdk = ? and version = ? limit 1"
        rows = list(self.db.query(query, [sdk, version]))
        return bool(rows[0]["prerelease"]) if rows else None

    def add_version(self, row: VersionRow) -> None:
        with self._lock:
            self.db.table("versions").insert(dict(row))

    def set_yanked(self, sdk: str, package: str, version: str, yanked: bool) -> None:
        with self._lock:
            self.db.table("versions").update((sdk, package, version), {"yanked": int(yanked)})

    def new_version_counts(self) -> dict[str, int]:
        """SDK → how many of its versions were first seen after its baseline."""
        rows = self.db.query("select sdk, count(*) as n from versions where baseline = 0 group by sdk")
        return {row["sdk"]: int(row["n"]) for row in rows}

    # --- polls -------------------------------------------------------------------------------------

    def record_poll(
        self,
        source: str,
        kind: str,
        started: datetime,
        ok: bool,
        error: str | None,
        *,
        finished: datetime | None = None,
        **figures: int,
    ) -> None:
        with self._lock:
            self.db.table("polls").insert(
                {
                    "source": source,
                    "kind": kind,
                    "started": iso(started),
                    "finished": iso(finished or utcnow()),
                    "ok": int(ok),
                    "error": error,
                    "requests": figures.get("requests", 0),
                    "bytes": figures.get("bytes", 0),
                    "not_modified": figures.get("not_modified", 0),
                    "new": figures.get("new", 0),
                }
            )

    def last_polls(self) -> list[PollRow]:
        """The latest poll of each source, by source name."""
        rows = self.db.query(
            "select p.* from polls p join (select source, max(id) as id from polls group by source) last "
            "on p.id = last.id order by p.source"
        )
        return [cast(PollRow, row) for row in rows]

    def last_successful_poll(self, kind: str) -> datetime | None:
        """When the last successful poll of this kind ("sdk", "spec") finished."""
        return parse_iso(self._one("select max(finished) as at from polls where kind = ? and ok = 1", [kind])["at"])

    def last_successful_polls(self) -> dict[str, datetime]:
        """Source → when its last successful poll finished."""
        rows = self.db.query("select source, max(finished) as at from polls where ok = 1 group by source")
        return {row["source"]: moment for row in rows if (moment := parse_iso(row["at"])) is not None}

    def source_polls(self, source: str) -> SourcePolls:
        """One source's poll history in brief: its latest poll, its last good one, and the first poll after it."""
        latest = list(self.db.query("select * from polls where source = ? order by id desc limit 1", [source]))
        good = self._one("select max(id) as id, max(finished) as at from polls where source = ? and ok = 1", [source])
        after = list(
            self.db.query(
                "select * from polls where source = ? and id > ? order by id limit 1", [source, good["id"] or 0]
            )
        )
        return SourcePolls(
            latest=cast(PollRow, latest[0]) if latest else None,
            last_ok_at=parse_iso(good["at"]),
            first_after_last_ok=cast(PollRow, after[0]) if after else None,
        )

    def poll_tally(self, source: str, since: datetime, until: datetime) -> tuple[int, int]:
        """(polls, successful polls) of ``source`` that finished in [since, until)."""
        row = self._one(
            "select count(*) as n, sum(ok) as good from polls where source = ? and finished >= ? and finished < ?",
            [source, iso(since), iso(until)],
        )
        return int(row["n"] or 0), int(row["good"] or 0)

    def poll_counts(self) -> list[PollCount]:
        rows = self.db.query("select source, ok, count(*) as n from polls group by source, ok")
        return [PollCount(source=row["source"], ok=bool(row["ok"]), polls=int(row["n"])) for row in rows]

    # --- events and the outbox -----------------------------------------------------------------------

    def add_event(self, key: str, kind: str, payload: dict[str, Any]) -> bool:
        """Record an event once. Returns False when an event with this key already exists."""
        with self._lock:
            cur = self.db.execute(
                "insert or ignore into events (key, kind, payload, created) values (?, ?, ?, ?)",
                [key, kind, json.dumps(payload, sort_keys=True, default=str), iso(utcnow())],
            )
            return cur.rowcount == 1

    def events(self, kind: str | None = None, since: datetime | None = None) -> list[EventRow]:
        where, params = _where(("kind = ?", kind), ("created >= ?", iso(since) if since else None))
        rows = list(self.db.query(f"select * from events {where} order by id", params))
        for row in rows:
            row["payload"] = json.loads(row["payload"])
        return [cast(EventRow, row) for row in rows]

    def newest_events(self, kinds: Sequence[str], limit: int) -> list[EventRow]:
        """The newest events of these kinds, newest first."""
        marks = ", ".join("?" * len(kinds))
        rows = self.db.query(f"select * from events where kind in ({marks}) order by id desc limit ?", [*kinds, limit])
        return [cast(EventRow, {**row, "payload": json.loads(row["payload"])}) for row in rows]

    def enqueue(self, notice: Notice) -> bool:
        """Put a notice in the outbox once. Returns False when its idempotency key is already there."""
        now = iso(utcnow())
        with self._lock:
            cur = self.db.execute(
                "insert or ignore into outbox (key, team, channel, kind, text, blocks, thread_of, status, "
                "attempts, created, updated, files) values (?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?)",
                [
                    notice.key,
                    notice.team,
                    notice.channel,
                    notice.kind,
                    notice.text,
                    json.dumps(notice.blocks),
                    notice.thread_of,
                    now,
                    now,
                    json.dumps(notice.files or []),
                ],
            )
            return cur.rowcount == 1

    def outbox(self, statuses: tuple[str, ...] | None = None, limit: int | None = None) -> list[OutboxRow]:
        sql = "select * from outbox"
        params: list[Any] = []
        if statuses:
            sql += f" where status in ({','.join('?' * len(statuses))})"
            params.extend(statuses)
        sql += " order by id"
        if limit:
            sql += f" limit {int(limit)}"
        rows = list(self.db.query(sql, params))
        for row in rows:
            row["blocks"] = json.loads(row["blocks"] or "[]")
            row["files"] = json.loads(row["files"] or "[]") or []
        return [cast(OutboxRow, row) for row in rows]

    def outbox_row(self, key: str) -> StoredOutboxRow | None:
        """The raw row (JSON columns as stored), or None."""
        rows = list(self.db.query("select * from outbox where key = ?", [key]))
        return cast(StoredOutboxRow, rows[0]) if rows else None

    def outbox_backlog(self) -> OutboxBacklog:
        marks = ",".join("?" * len(_PENDING))
        pending = self._one(
            f"select count(*) as n, min(created) as oldest from outbox where status in ({marks})", _PENDING
        )
        failed = self._one("select count(*) as n from outbox where status = 'failed'")
        return OutboxBacklog(
            pending=int(pending["n"]), oldest_pending=parse_iso(pending["oldest"]), failed=int(failed["n"])
        )

    def update_outbox(self, row_id: int, **fields: Any) -> None:
        fields["updated"] = iso(utcnow())
        with self._lock:
            self.db.table("outbox").update(row_id, fields)

    # --- suite runs: a persisted, de-duplicated queue ------------------------------------------------

    def queue_run(self, server: str, sdk: str, sdk_version: str, trigger: str) -> bool:
        """Queue one run of a server against an SDK version. False when that pair was queued before."""
        return self._queue(f"{server}@{sdk_version}", server, sdk, sdk_version, trigger) is not None

    def queue_rerun(self, server: str, sdk: str, sdk_version: str, trigger: str) -> int | None:
        """Queue the pair again under its own key (a rerun asked for in Slack), unless a run of that pair is
        queued or running (a second click must not add one); the new run's id."""
        with self.transaction():
            if self.active_run(server, sdk_version) is not None:
                return None
            return self._queue(f"{server}@{sdk_version}#{trigger}", server, sdk, sdk_version, trigger)

    def _queue(self, key: str, server: str, sdk: str, sdk_version: str, trigger: str) -> int | None:
        """The one insert of a queued run; None when a run with that key exists."""
        with self._lock:
            cur = self.db.execute(
                "insert or ignore into runs (key, server, sdk, sdk_version, trigger, status, queued) "
                "values (?, ?, ?, ?, ?, 'queued', ?)",
                [key, server, sdk, sdk_version, trigger, iso(utcnow())],
            )
            return int(cur.lastrowid) if cur.rowcount == 1 and cur.lastrowid is not None else None

    def active_run(self, server: str, sdk_version: str) -> ActiveRun | None:
        """The oldest run of the server on the version that is queued or running."""
        rows = self.db.query(
            "select id, status, trigger from runs where server = ? and sdk_version = ? "
            "and status in ('queued', 'running') order by id limit 1",
            [server, sdk_version],
        )
        return next((cast(ActiveRun, row) for row in rows), None)

    def claim_run(self) -> RunRow | None:
        """Take the oldest queued run and mark it running (atomically)."""
        with self.transaction() as db:
            rows = list(db.query("select * from runs where status = 'queued' order by id limit 1"))
            if not rows:
                return None
            db.execute("update runs set status = 'running', started = ? where id = ?", [iso(utcnow()), rows[0]["id"]])
            rows[0]["status"] = "running"
            return run_row(rows[0])

    def finish_run(self, run_id: int, verdict: str | None, report: RunReport, seconds: float) -> None:
        with self._lock:
            self.db.table("runs").update(
                run_id,
                {
                    "status": "done",
                    "verdict": verdict,
                    "report": masked_json(report, vault.held_values()),
                    "finished": iso(utcnow()),
                    "seconds": seconds,
                },
            )

    def record_run(self, server: str, sdk: str, sdk_version: str, trigger: str, report: RunReport) -> int:
        """A run made outside the queue (`check` by hand: trigger "cli"), recorded done; its row id.

        Its key is the report's own run id, so it never takes the queue's `server@version` slot."""
        now = iso(utcnow())
        with self._lock:
            cur = self.db.execute(
                "insert into runs (key, server, sdk, sdk_version, trigger, status, verdict, report, queued, "
                "started, finished, seconds) values (?, ?, ?, ?, ?, 'done', ?, ?, ?, ?, ?, ?)",
                [
                    f"{trigger}:{server}@{sdk_version}:{report.get('run_id') or now}",
                    server,
                    sdk,
                    sdk_version,
                    trigger,
                    report.get("verdict"),
                    masked_json(report, vault.held_values()),
                    report.get("started_at") or now,
                    report.get("started_at") or now,
                    now,
                    report.get("seconds"),
                ],
            )
            return int(cur.lastrowid or 0)

    def interrupt_run(self, run_id: int, report: RunReport | None = None) -> None:
        """A run stopped half-way (shutdown): recorded as interrupted and queued again for the next start."""
        with self._lock:
            self.db.table("runs").update(
                run_id,
                {
                    "status": "queued",
                    "verdict": "interrupted",
                    "finished": iso(utcnow()),
                    "report": masked_json(report, vault.held_values()) if report else None,
                },
            )

    def requeue_interrupted(self) -> list[RunRow]:
        """After a crash, runs left 'running' are recorded as interrupted and go back to the queue."""
        with self.transaction() as db:
            rows = list(db.query("select * from runs where status = 'running'"))
            db.execute(
                "update runs set status = 'queued', verdict = 'interrupted', finished = ? where status = 'running'",
                [iso(utcnow())],
            )
            return [run_row(row) for row in rows]

    def runs(self, status: str | None = None, server: str | None = None, limit: int = 100) -> list[RunRow]:
        where, params = _where(("status = ?", status), ("server = ?", server))
        rows = self.db.query(f"select * from runs {where} order by id desc limit {int(limit)}", params)
        return [run_row(row) for row in rows]

    def count_runs(self, status: str) -> int:
        return int(self._one("select count(*) as n from runs where status = ?", [status])["n"])

    def finished_run_figures(self) -> list[VerdictFigures]:
        """Finished runs per verdict: how many, and their seconds in total."""
        rows = self.db.query(
            "select verdict, count(*) as n, sum(seconds) as s from runs where status = 'done' group by verdict"
        )
        return [
            VerdictFigures(verdict=row["verdict"], runs=int(row["n"]), seconds=float(row["s"] or 0.0)) for row in rows
        ]

    # --- status page queries (watcher/web): read-only, light rows -----------------------------------

    # --- runs dispatched to a team's CI ----------------------------------------------------------------

    def dispatched(self, run_key: str) -> dict[str, Any] | None:
        rows = list(self.db.query("select * from dispatched_runs where run_key = ?", [run_key]))
        return rows[0] if rows else None

    def record_dispatch(self, run_key: str, **fields: Any) -> None:
        """Create or update the row of one dispatched run (state, gh_run_id, html_url, …)."""
        with self._lock:
            self.db.table("dispatched_runs").upsert(
                {"run_key": run_key, **fields, "updated": iso(utcnow())}, pk="run_key"
            )

    def run_cells(self) -> list[RunCell]:
        """Every run without its report (the status matrix): id, server, sdk, version, status, verdict, times."""
        return [
            cast(RunCell, row)
            for row in self.db.query(
                "select id, server, sdk, sdk_version, trigger, status, verdict, queued, started, finished "
                "from runs order by id"
            )
        ]

    def run_by_id(self, run_id: int) -> RunRow | None:
        """One run with its report parsed, or None."""
        rows = list(self.db.query("select * from runs where id = ?", [run_id]))
        return run_row(rows[0]) if rows else None

    def version_rows(self) -> list[VersionRow]:
        """Every version seen, of every SDK (the status matrix's columns)."""
        return [
            cast(VersionRow, row) for row in self.db.query("select * from versions order by sdk, first_seen, version")
        ]

    def outbox_counts(self) -> dict[str, int]:
        """Outbox rows per status."""
        return {
            str(r["status"]): int(r["n"])
            for r in self.db.query("select status, count(*) as n from outbox group by status")
        }

    def oldest_undelivered(self) -> datetime | None:
        """When the oldest notice still waiting for delivery was queued."""
        rows = list(
            self.db.query("select min(created) as at from outbox where status in ('queued','sending','posted')")
        )
        return parse_iso(rows[0]["at"]) if rows else None

    def run_status_counts(self) -> dict[str, int]:
        """Runs per status (queued, running, done)."""
        rows = self.db.query("select status, count(*) as n from runs group by status")
        return {str(r["status"]): int(r["n"]) for r in rows}

    def latest_cells(self, servers: Sequence[str] | None = None) -> list[LatestCell]:
        """The newest run of each (server, SDK version), of any trigger, for these servers (None: all): its id,
        trigger, the matrix state (`STATE_SQL`) and the moment that state dates from. One query, answered by
        the covering index without reading a report; plain tuples, as the page reads them."""
        where, params = "", list(servers or [])
        if servers is not None:
            where = f"where server in ({', '.join('?' * len(params))})" if params else "where 0"
        # SQLite takes a bare column of a max() aggregate from the row holding the max: the newest run's.
        sql = (
            f"select r.server, r.sdk_version, max(r.id), r.trigger, {STATE_SQL} as state, "
            "coalesce(case r.status when 'running' then r.started when 'queued' then "
            "(case when r.verdict = 'interrupted' then r.finished else r.queued end) else r.finished end, r.queued) "
            f"from runs r {where} group by r.server, r.sdk_version"
        )
        with self._lock:
            return cast(list[LatestCell], self.db.execute(sql, params).fetchall())

    def latest_run_tally(self) -> list[RunTally]:
        """How many (server, SDK version) pairs have their newest run in each status and verdict, per server."""
        rows = self.db.query(
            f"select server, sdk, state, count(*) as n from (select r.server, r.sdk, max(r.id), {STATE_SQL} as state "
            "from runs r group by r.server, r.sdk_version) group by server, sdk, state"
        )
        return [cast(RunTally, row) for row in rows]

    def tested_versions(self) -> dict[str, set[str]]:
        """SDK → every version some server was run against."""
        tested: dict[str, set[str]] = {}
        for row in self.db.query("select distinct sdk, sdk_version from runs"):
            tested.setdefault(str(row["sdk"]), set()).add(str(row["sdk_version"]))
        return tested

    def run_refs(self, statuses: tuple[str, ...], limit: int, newest_first: bool = False) -> list[RunCell]:
        """Runs in these statuses without their reports, oldest first (or newest first), at most ``limit``."""
        marks = ", ".join("?" * len(statuses))
        order = "desc" if newest_first else "asc"
        return [
            cast(RunCell, row)
            for row in self.db.query(
                "select id, server, sdk, sdk_version, trigger, status, verdict, queued, started, finished from runs "
                f"where status in ({marks}) order by id {order} limit ?",
                [*statuses, limit],
            )
        ]


def _where(*conditions: tuple[str, str | None]) -> tuple[str, list[str]]:
    """A where clause of the conditions whose value is given (a None or empty value means "any")."""
    chosen = [(sql, value) for sql, value in conditions if value]
    if not chosen:
        return "", []
    return "where " + " and ".join(sql for sql, _ in chosen), [value for _, value in chosen if value]
