"""The state database's shape: its migrations and the typed rows and figures `Store` returns."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict

import sqlite_utils

from watcher.core.run_report import RunReport, load_report
from watcher.core.store_clusters import migrate_clusters
from watcher.core.text import Mrkdwn

# --- migrations: append only; each runs once, in order, inside one transaction --------------------


def _m1_initial(db: sqlite_utils.Database) -> None:
    db.table("versions").create(
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
    db.table("polls").create(
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
    db.table("polls").create_index(["source", "id"])
    db.table("http_cache").create(
        {"url": str, "etag": str, "last_modified": str, "body": bytes, "fetched": str}, pk="url"
    )
    db.table("events").create({"id": int, "key": str, "kind": str, "payload": str, "created": str}, pk="id")
    db.table("events").create_index(["key"], unique=True)
    db.table("outbox").create(
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
    db.table("outbox").create_index(["key"], unique=True)
    db.table("outbox").create_index(["status", "id"])
    db.table("kv").create({"key": str, "value": str, "updated": str}, pk="key")
    db.table("runs").create(
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
    db.table("runs").create_index(["key"], unique=True)
    db.table("runs").create_index(["status", "id"])


def _m2_dispatched_runs(db: sqlite_utils.Database) -> None:
    """Suite runs handed to a team's CI (GitHub Actions): one dispatch per run key, followed across restarts."""
    db.table("dispatched_runs").create(
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


def _m3_status_matrix_indexes(db: sqlite_utils.Database) -> None:
    """The status matrix reads the latest run of each (server, SDK version), optionally for some servers only:
    one covering index answers the grouping, the filter and the cell's columns without reading the reports."""
    db.table("runs").create_index(
        ["server", "sdk_version", "id", "status", "verdict", "trigger", "queued", "started", "finished"],
        index_name="runs_matrix_cells",
    )
    db.table("runs").create_index(["sdk", "sdk_version"], index_name="runs_sdk_version")


def _m4_backtests(db: sqlite_utils.Database) -> None:
    """Backtests (a server replayed against an SDK's past releases) and the result of each server x version,
    kept by fingerprint (the server's files or commit, its settings, the version) so a repeat costs nothing."""
    db.table("backtests").create(
        {
            "id": int,
            "server": str,
            "sdk": str,
            "package": str,
            "since": str,
            "until": str,
            "params": str,
            "status": str,
            "created": str,
            "finished": str,
            "seconds": float,
            "answer": str,
        },
        pk="id",
    )
    db.table("backtests").create_index(["server", "id"])
    db.table("backtests").create_index(["params", "status"])
    db.table("backtest_results").create(
        {
            "key": str,
            "server": str,
            "package": str,
            "version": str,
            "fingerprint": str,
            "verdict": str,
            "report": str,
            "finished": str,
            "seconds": float,
            "backtest_id": int,
        },
        pk="key",
    )


def _m5_slack_actions(db: sqlite_utils.Database) -> None:
    """What people did from Slack (watcher.slackapp): every action with who, when and from which message
    (one row per delivery: a retried delivery finds its row), and the accepts and mutes they made."""
    db.table("slack_actions").create(
        {
            "id": int,
            "delivery": str,
            "at": str,
            "user_id": str,
            "user_name": str,
            "team": str,
            "action": str,
            "server": str,
            "sdk": str,
            "version": str,
            "detail": str,
            "channel": str,
            "message_ts": str,
            "outcome": str,
            "deliveries": int,
        },
        pk="id",
    )
    db.table("slack_actions").create_index(["delivery"], unique=True)
    db.table("slack_actions").create_index(["server", "version"])
    db.table("slack_accepts").create(
        {
            "id": int,
            "server": str,
            "team": str,
            "entry": str,
            "created": str,
            "user_id": str,
            "user_name": str,
            "action_id": int,
        },
        pk="id",
    )
    db.table("slack_accepts").create_index(["server"])
    db.table("slack_mutes").create(
        {
            "id": int,
            "team": str,
            "sdk": str,
            "package": str,
            "until": str,
            "created": str,
            "user_id": str,
            "user_name": str,
            "action_id": int,
        },
        pk="id",
    )
    db.table("slack_mutes").create_index(["team", "sdk"])


MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [
    _m1_initial,
    _m2_dispatched_runs,
    _m3_status_matrix_indexes,
    _m4_backtests,
    _m5_slack_actions,
    migrate_clusters,
]
SCHEMA_VERSION = len(MIGRATIONS)


# --- rows: one TypedDict per table, as `Store` returns them (JSON columns decoded) ---------------------


class VersionRow(TypedDict):
    sdk: str
    registry: str
    package: str
    version: str
    prerelease: int
    yanked: int
    published: str | None
    first_seen: str
    baseline: int


class PollRow(TypedDict):
    id: int
    source: str
    kind: str
    started: str
    finished: str
    ok: int
    error: str | None
    requests: int
    bytes: int
    not_modified: int
    new: int


@dataclass(frozen=True)
class SourcePolls:
    """What the source-health alerts need of one source's polls."""

    latest: PollRow | None
    last_ok_at: datetime | None
    first_after_last_ok: PollRow | None
    """The first poll after the last successful one (the start of an outage), or None."""


class HttpCacheRow(TypedDict):
    url: str
    etag: str | None
    last_modified: str | None
    body: bytes


class ActiveRun(TypedDict):
    """A run that is queued or running: its id, status and trigger."""

    id: int
    status: str
    trigger: str


class EventRow(TypedDict):
    id: int
    key: str
    kind: str
    payload: dict[str, Any]
    created: str


class OutboxRow(TypedDict):
    id: int
    key: str
    team: str
    channel: str
    kind: str
    text: str
    blocks: list[dict[str, Any]]
    thread_of: str | None
    status: str
    attempts: int | None
    last_error: str | None
    created: str
    updated: str
    sent_at: str | None
    slack_channel: str | None
    slack_ts: str | None
    files: list[dict[str, Any]]


class StoredOutboxRow(TypedDict):
    """An outbox row as stored, its JSON columns still text (`Store.outbox_row`)."""

    id: int
    key: str
    team: str
    channel: str
    kind: str
    text: str
    blocks: str
    thread_of: str | None
    status: str
    attempts: int | None
    last_error: str | None
    created: str
    updated: str
    sent_at: str | None
    slack_channel: str | None
    slack_ts: str | None
    files: str | None


class RunRow(TypedDict):
    id: int
    key: str
    server: str
    sdk: str
    sdk_version: str
    trigger: str
    status: str
    verdict: str | None
    report: RunReport | None
    queued: str
    started: str | None
    finished: str | None
    seconds: float | None


class RunCell(TypedDict):
    """A run without its report (a cell of the status matrix); every `RunRow` is one too."""

    id: int
    server: str
    sdk: str
    sdk_version: str
    trigger: str
    status: str
    verdict: str | None
    queued: str
    started: str | None
    finished: str | None


STATE_SQL = (
    "(case when r.status = 'done' then coalesce(r.verdict, 'error') when r.status = 'running' then 'running' "
    "when r.verdict = 'interrupted' then 'interrupted' else 'queued' end)"
)
"""A run's state in the status matrix (pass, fail, error, interrupted, running, queued), as SQL over ``runs r``."""

LatestCell = tuple[str, str, int, str, str, str | None]
"""(server, SDK version, run id, trigger, state, moment): the newest run of one matrix cell."""


class RunTally(TypedDict):
    """How many (server, SDK version) pairs of one server have their newest run in this state."""

    server: str
    sdk: str
    state: str
    n: int


class BacktestRow(TypedDict):
    id: int
    server: str
    sdk: str
    package: str
    since: str
    until: str
    params: str
    status: str
    """running, interrupted or done."""
    created: str
    finished: str | None
    seconds: float | None
    answer: dict[str, Any] | None


class BacktestResultRow(TypedDict):
    key: str
    server: str
    package: str
    version: str
    fingerprint: str
    verdict: str
    report: RunReport
    finished: str
    seconds: float | None
    backtest_id: int


# --- figures: counts the health endpoints read --------------------------------------------------------


@dataclass(frozen=True)
class PollCount:
    source: str
    ok: bool
    polls: int


@dataclass(frozen=True)
class VerdictFigures:
    verdict: str | None
    runs: int
    seconds: float


@dataclass(frozen=True)
class OutboxBacklog:
    pending: int
    """Notices queued, being sent, or posted without their files yet."""
    oldest_pending: datetime | None
    failed: int
    """Notices Slack refused for good."""


@dataclass(frozen=True)
class Notice:
    """One message for one team, identified by an idempotency key."""

    key: str
    team: str
    channel: str
    kind: str
    """What news it is: one of `watcher.notify.keys.NOTICE_KINDS`."""
    text: Mrkdwn
    """The notification and fallback text: mrkdwn of ours, outside text in it escaped (`watcher.core.text`)."""
    blocks: list[dict[str, Any]]
    """Block Kit blocks, made by `watcher.notify.blocks`."""
    thread_of: str | None = None
    """The key of the notice whose Slack thread this one replies in."""
    files: list[dict[str, Any]] | None = None
    """Files to upload with the message: [{"path", "title", "filename"}]."""


def run_row(row: dict[str, Any]) -> RunRow:
    """A runs row with its report decoded (a report stored by any earlier release loads: core/run_report)."""
    report = load_report(json.loads(row["report"]), f"runs row {row['id']}") if row["report"] else None
    return {
        "id": row["id"],
        "key": row["key"],
        "server": row["server"],
        "sdk": row["sdk"],
        "sdk_version": row["sdk_version"],
        "trigger": row["trigger"],
        "status": row["status"],
        "verdict": row["verdict"],
        "report": report,
        "queued": row["queued"],
        "started": row["started"],
        "finished": row["finished"],
        "seconds": row["seconds"],
    }


def backtest_result_row(row: dict[str, Any]) -> BacktestResultRow:
    """A backtest_results row with its report decoded, as `run_row` decodes a run's."""
    return {
        "key": row["key"],
        "server": row["server"],
        "package": row["package"],
        "version": row["version"],
        "fingerprint": row["fingerprint"],
        "verdict": row["verdict"],
        "report": load_report(json.loads(row["report"]), f"backtest_results row {row['key']!r}"),
        "finished": row["finished"],
        "seconds": row["seconds"],
        "backtest_id": row["backtest_id"],
    }
