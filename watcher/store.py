"""SQLite state through sqlite-utils: schema versions, migrations, versions seen, polls and the outbox."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from watcher import clock


def utcnow() -> datetime:
    return clock.now()


def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# --- migrations: append only; each runs once, in order, inside one transaction --------------------


def _m1_initial(db: sqlite_utils.Database) -> None:
    db["versions"].create(
        {
            "sdk": str,
            "registry": str,
            "package": str,
            "version": str,
            "prerelease": int,
            "yanked": int,
            "published": str,
            "first_seen": str,
            "baseline": int,
        },
        pk=("sdk", "package", "version"),
    )
    db["polls"].create(
        {
            "id": int,
            "source": str,
            "kind": str,
            "started": str,
            "finished": str,
            "ok": int,
            "error": str,
            "requests": int,
            "bytes": int,
            "not_modified": int,
            "new": int,
        },
        pk="id",
    )
    db["polls"].create_index(["source", "id"])
    db["http_cache"].create({"url": str, "etag": str, "last_modified": str, "body": bytes, "fetched": str}, pk="url")
    db["events"].create({"id": int, "key": str, "kind": str, "payload": str, "created": str}, pk="id")
    db["events"].create_index(["key"], unique=True)
    db["outbox"].create(
        {
            "id": int,
            "key": str,
            "team": str,
            "channel": str,
            "kind": str,
            "text": str,
            "blocks": str,
            "thread_of": str,
            "status": str,
            "attempts": int,
            "last_error": str,
            "created": str,
            "updated": str,
            "sent_at": str,
            "slack_channel": str,
            "slack_ts": str,
            "files": str,
        },
        pk="id",
    )
    db["outbox"].create_index(["key"], unique=True)
    db["outbox"].create_index(["status", "id"])
    db["kv"].create({"key": str, "value": str, "updated": str}, pk="key")
    db["runs"].create(
        {
            "id": int,
            "key": str,
            "server": str,
            "sdk": str,
            "sdk_version": str,
            "trigger": str,
            "status": str,
            "verdict": str,
            "report": str,
            "queued": str,
            "started": str,
            "finished": str,
            "seconds": float,
        },
        pk="id",
    )
    db["runs"].create_index(["key"], unique=True)
    db["runs"].create_index(["status", "id"])


def _m2_dispatched_runs(db: sqlite_utils.Database) -> None:
    """Suite runs handed to a team's CI (GitHub Actions): one dispatch per run key, followed across restarts."""
    db["dispatched_runs"].create(
        {
            "run_key": str,
            "server": str,
            "sdk_version": str,
            "repo": str,
            "workflow": str,
            "state": str,
            "gh_run_id": int,
            "html_url": str,
            "dispatched_at": str,
            "updated": str,
        },
        pk="run_key",
    )


MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [_m1_initial, _m2_dispatched_runs]
SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(Exception):
    pass


class Store:
    """The service's state. One instance per process; safe to share across threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        self.db = sqlite_utils.Database(conn)
        self._lock = threading.RLock()
        self.migrate()

    def close(self) -> None:
        self.db.conn.close()

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
            self.db["kv"].upsert(
                {"key": key, "value": json.dumps(value, sort_keys=True), "updated": iso(utcnow())}, pk="key"
            )

    # --- HTTP cache for conditional requests -------------------------------------------------------

    def http_cache_get(self, url: str) -> dict[str, Any] | None:
        rows = list(self.db.query("select * from http_cache where url = ?", [url]))
        return rows[0] if rows else None

    def http_cache_put(self, url: str, etag: str | None, last_modified: str | None, body: bytes) -> None:
        with self._lock:
            self.db["http_cache"].upsert(
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

    def versions_of(self, sdk: str) -> list[dict[str, Any]]:
        return list(self.db.query("select * from versions where sdk = ? order by first_seen, version", [sdk]))

    def record_poll(
        self, source: str, kind: str, started: datetime, ok: bool, error: str | None, **figures: int
    ) -> None:
        with self._lock:
            self.db["polls"].insert(
                {
                    "source": source,
                    "kind": kind,
                    "started": iso(started),
                    "finished": iso(utcnow()),
                    "ok": int(ok),
                    "error": error,
                    "requests": figures.get("requests", 0),
                    "bytes": figures.get("bytes", 0),
                    "not_modified": figures.get("not_modified", 0),
                    "new": figures.get("new", 0),
                }
            )

    # --- events and the outbox -----------------------------------------------------------------------

    def add_event(self, key: str, kind: str, payload: dict[str, Any]) -> bool:
        """Record an event once. Returns False when an event with this key already exists."""
        with self._lock:
            cur = self.db.execute(
                "insert or ignore into events (key, kind, payload, created) values (?, ?, ?, ?)",
                [key, kind, json.dumps(payload, sort_keys=True, default=str), iso(utcnow())],
            )
            return cur.rowcount == 1

    def events(self, kind: str | None = None, since: datetime | None = None) -> list[dict[str, Any]]:
        sql = "select * from events where 1=1"
        params: list[Any] = []
        if kind:
            sql += " and kind = ?"
            params.append(kind)
        if since:
            sql += " and created >= ?"
            params.append(iso(since))
        rows = list(self.db.query(sql + " order by id", params))
        for row in rows:
            row["payload"] = json.loads(row["payload"])
        return rows

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

    def outbox(self, statuses: tuple[str, ...] | None = None, limit: int | None = None) -> list[dict[str, Any]]:
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
        return rows

    def outbox_row(self, key: str) -> dict[str, Any] | None:
        rows = list(self.db.query("select * from outbox where key = ?", [key]))
        return rows[0] if rows else None

    def update_outbox(self, row_id: int, **fields: Any) -> None:
        fields["updated"] = iso(utcnow())
        with self._lock:
            self.db["outbox"].update(row_id, fields)

    # --- suite runs: a persisted, de-duplicated queue ------------------------------------------------

    def queue_run(self, server: str, sdk: str, sdk_version: str, trigger: str) -> bool:
        """Queue one run of a server against an SDK version. False when that pair was queued before."""
        now = iso(utcnow())
        with self._lock:
            cur = self.db.execute(
                "insert or ignore into runs (key, server, sdk, sdk_version, trigger, status, queued) "
                "values (?, ?, ?, ?, ?, 'queued', ?)",
                [f"{server}@{sdk_version}", server, sdk, sdk_version, trigger, now],
            )
            return cur.rowcount == 1

    def claim_run(self) -> dict[str, Any] | None:
        """Take the oldest queued run and mark it running (atomically)."""
        with self.transaction() as db:
            rows = list(db.query("select * from runs where status = 'queued' order by id limit 1"))
            if not rows:
                return None
            db.execute("update runs set status = 'running', started = ? where id = ?", [iso(utcnow()), rows[0]["id"]])
            rows[0]["status"] = "running"
            return rows[0]

    def finish_run(self, run_id: int, verdict: str, report: dict[str, Any], seconds: float) -> None:
        with self._lock:
            self.db["runs"].update(
                run_id,
                {
                    "status": "done",
                    "verdict": verdict,
                    "report": json.dumps(report, sort_keys=True, default=str),
                    "finished": iso(utcnow()),
                    "seconds": seconds,
                },
            )

    def interrupt_run(self, run_id: int, report: dict[str, Any] | None = None) -> None:
        """A run stopped half-way (shutdown): recorded as interrupted and queued again for the next start."""
        with self._lock:
            self.db["runs"].update(
                run_id,
                {
                    "status": "queued",
                    "verdict": "interrupted",
                    "finished": iso(utcnow()),
                    "report": json.dumps(report, sort_keys=True, default=str) if report else None,
                },
            )

    def requeue_interrupted(self) -> list[dict[str, Any]]:
        """After a crash, runs left 'running' are recorded as interrupted and go back to the queue."""
        with self.transaction() as db:
            rows = list(db.query("select * from runs where status = 'running'"))
            db.execute(
                "update runs set status = 'queued', verdict = 'interrupted', finished = ? where status = 'running'",
                [iso(utcnow())],
            )
            return rows

    def runs(self, status: str | None = None, server: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        sql = "select * from runs where 1=1"
        params: list[Any] = []
        if status:
            sql += " and status = ?"
            params.append(status)
        if server:
            sql += " and server = ?"
            params.append(server)
        rows = list(self.db.query(sql + f" order by id desc limit {int(limit)}", params))
        for row in rows:
            row["report"] = json.loads(row["report"]) if row["report"] else None
        return rows

    # --- status page queries (watcher/web): read-only, light rows -----------------------------------

    # --- runs dispatched to a team's CI ----------------------------------------------------------------

    def dispatched(self, run_key: str) -> dict[str, Any] | None:
        rows = list(self.db.query("select * from dispatched_runs where run_key = ?", [run_key]))
        return rows[0] if rows else None

    def record_dispatch(self, run_key: str, **fields: Any) -> None:
        """Create or update the row of one dispatched run (state, gh_run_id, html_url, …)."""
        with self._lock:
            self.db["dispatched_runs"].upsert({"run_key": run_key, **fields, "updated": iso(utcnow())}, pk="run_key")

    def run_cells(self) -> list[dict[str, Any]]:
        """Every run without its report (the status matrix): id, server, sdk, version, status, verdict, times."""
        return list(
            self.db.query(
                "select id, server, sdk, sdk_version, trigger, status, verdict, queued, started, finished "
                "from runs order by id"
            )
        )

    def run_by_id(self, run_id: int) -> dict[str, Any] | None:
        """One run with its report parsed, or None."""
        rows = list(self.db.query("select * from runs where id = ?", [run_id]))
        if not rows:
            return None
        row = rows[0]
        row["report"] = json.loads(row["report"]) if row["report"] else None
        return row

    def version_rows(self) -> list[dict[str, Any]]:
        """Every version seen, of every SDK (the status matrix's columns)."""
        return list(self.db.query("select * from versions order by sdk, first_seen, version"))

    def outbox_counts(self) -> dict[str, int]:
        """Outbox rows per status."""
        return {r["status"]: r["n"] for r in self.db.query("select status, count(*) as n from outbox group by status")}

    def oldest_undelivered(self) -> datetime | None:
        """When the oldest notice still waiting for delivery was queued."""
        rows = list(
            self.db.query("select min(created) as at from outbox where status in ('queued','sending','posted')")
        )
        return parse_iso(rows[0]["at"]) if rows else None


@dataclass(frozen=True)
class Notice:
    """One message for one team, identified by an idempotency key."""

    key: str
    team: str
    channel: str
    kind: str
    text: str
    blocks: list[dict[str, Any]]
    thread_of: str | None = None
    """The key of the notice whose Slack thread this one replies in."""
    files: list[dict[str, Any]] | None = None
    """Files to upload with the message: [{"path", "title", "filename"}]."""
