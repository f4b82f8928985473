"""The state of what people did from Slack (watcher/decisions): actions under their delivery key, the accept
entries and the mutes they made, and the outbox row a clicked message came from. Its SQL lives here, beside
`store.py`, which mixes `DecisionTables` into the `Store`; the rows are plain (JSON columns as text), and
`watcher.decisions.records` turns them into its records."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict, cast

import sqlite_utils

from watcher.core.state_check import check_state_file


class ActionRow(TypedDict):
    id: int
    delivery: str
    at: str
    user_id: str
    user_name: str
    team: str
    action: str
    server: str | None
    sdk: str | None
    version: str | None
    detail: str | None
    """JSON text."""
    channel: str | None
    message_ts: str | None
    outcome: str
    deliveries: int | None


class NewAction(TypedDict):
    """An action as first recorded (its outcome is 'pending' until `finish_action`)."""

    delivery: str
    at: str
    user_id: str
    user_name: str
    team: str
    action: str
    server: str | None
    sdk: str | None
    version: str | None
    detail: str
    """JSON text."""
    channel: str | None
    message_ts: str | None


class SlackAcceptRow(TypedDict):
    id: int
    server: str
    team: str
    entry: str
    """JSON text: an accept-file entry."""
    created: str
    user_id: str
    user_name: str
    action_id: int | None


class MuteRow(TypedDict):
    team: str
    sdk: str
    package: str
    until: str
    created: str
    user_id: str
    user_name: str
    action_id: int | None


class NoticeRef(TypedDict):
    """Which notice a Slack message is (the outbox row posted at that channel and ts)."""

    key: str
    thread_of: str | None
    kind: str
    team: str


def slack_accept_rows(db: sqlite_utils.Database, server: str | None = None) -> list[SlackAcceptRow]:
    """The Slack accepts in a state database (a Store's, or one opened read-only by a run), oldest first."""
    where, params = ("where server = ?", [server]) if server is not None else ("", [])
    return [cast(SlackAcceptRow, row) for row in db.query(f"select * from slack_accepts {where} order by id", params)]


@contextmanager
def _read_only(path: Path) -> Iterator[sqlite_utils.Database]:
    check_state_file(path)
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        yield sqlite_utils.Database(conn)
    finally:
        conn.close()


def read_slack_accept_rows(path: Path, server: str) -> list[SlackAcceptRow]:
    """The server's Slack accepts, read without writing the state (no migration, no WAL switch); a state
    without the table has none (no service has migrated it yet, so no one can have accepted in Slack)."""
    with _read_only(path) as db:
        return slack_accept_rows(db, server) if db["slack_accepts"].exists() else []


class DecisionTables:
    """The Slack decision queries of the `Store` (its `db`, lock and transactions)."""

    db: sqlite_utils.Database
    _lock: threading.RLock

    def transaction(self) -> Any:  # the Store's (declared here for the type checker)
        raise NotImplementedError

    def claim_action(self, action: NewAction) -> int | None:
        """Record an action under its delivery key; None when that delivery was recorded already (a retry:
        counted in `deliveries`, nothing else stored)."""
        with self.transaction() as db:
            seen = list(db.query("select id from slack_actions where delivery = ?", [action["delivery"]]))
            if seen:
                db.execute("update slack_actions set deliveries = deliveries + 1 where id = ?", [seen[0]["id"]])
                return None
            cur = db.execute(
                "insert into slack_actions (delivery, at, user_id, user_name, team, action, server, sdk, version, "
                "detail, channel, message_ts, outcome, deliveries) "
                "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 1)",
                [
                    action["delivery"],
                    action["at"],
                    action["user_id"],
                    action["user_name"],
                    action["team"],
                    action["action"],
                    action["server"],
                    action["sdk"],
                    action["version"],
                    action["detail"],
                    action["channel"],
                    action["message_ts"],
                ],
            )
            return int(cur.lastrowid) if cur.lastrowid is not None else None

    def finish_action(self, action_id: int, outcome: str) -> None:
        self.db.execute("update slack_actions set outcome = ? where id = ?", [outcome, action_id])

    def action_rows(self, server: str | None = None, version: str | None = None, limit: int = 50) -> list[ActionRow]:
        """The newest actions first, optionally of one server (and version)."""
        clauses, params = [], []
        if server is not None:
            clauses.append("server = ?")
            params.append(server)
        if version is not None:
            clauses.append("version = ?")
            params.append(version)
        where = f"where {' and '.join(clauses)}" if clauses else ""
        rows = self.db.query(f"select * from slack_actions {where} order by id desc limit ?", [*params, limit])
        return [cast(ActionRow, row) for row in rows]

    def add_slack_accepts(self, rows: list[SlackAcceptRow]) -> None:
        """Store accept entries made in Slack (their `id` is the database's), in one transaction."""
        with self.transaction() as db:
            for row in rows:
                db.execute(
                    "insert into slack_accepts (server, team, entry, created, user_id, user_name, action_id) "
                    "values (?, ?, ?, ?, ?, ?, ?)",
                    [
                        row["server"],
                        row["team"],
                        row["entry"],
                        row["created"],
                        row["user_id"],
                        row["user_name"],
                        row["action_id"],
                    ],
                )

    def slack_accepts(self, server: str | None = None) -> list[SlackAcceptRow]:
        return slack_accept_rows(self.db, server)

    def add_mute(self, row: MuteRow) -> None:
        self.db.execute(
            "insert into slack_mutes (team, sdk, package, until, created, user_id, user_name, action_id) "
            "values (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                row["team"],
                row["sdk"],
                row["package"],
                row["until"],
                row["created"],
                row["user_id"],
                row["user_name"],
                row["action_id"],
            ],
        )

    def mute_rows(self, ending_after: str, team: str | None = None) -> list[MuteRow]:
        """The mutes whose end is after the ISO moment ``ending_after``, earliest end first."""
        where, params = ("where until > ?", [ending_after])
        if team is not None:
            where += " and team = ?"
            params.append(team)
        rows = self.db.query(f"select * from slack_mutes {where} order by until", params)
        return [cast(MuteRow, row) for row in rows]

    def notice_at(self, channel: str | None, ts: str) -> NoticeRef | None:
        """The outbox row (key, thread_of, kind, team) of the message Slack shows at ``ts`` in ``channel``."""
        rows = list(
            self.db.query(
                "select key, thread_of, kind, team from outbox where slack_ts = ? and (? is null or slack_channel = ?)",
                [ts, channel, channel],
            )
        )
        return cast(NoticeRef, rows[0]) if rows else None
