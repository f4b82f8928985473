"""What people did from Slack, kept in the state database: actions (who, what, when, from which message),
the accept entries and the mutes they made. Plain rows in, plain rows out."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlite_utils

from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.core.timefmt import iso, parse_iso, utcnow
from watcher.notify.blocks import Mrkdwn, escape

ACTIVE_RUN = ("queued", "running")


@dataclass(frozen=True)
class Actor:
    """The Slack user who did something."""

    user_id: str
    user_name: str

    @property
    def mention(self) -> Mrkdwn:
        # By name, as text: the one Block Kit layer turns every `<@…>` into visible text (no notice may ping).
        return escape(f"@{self.user_name or self.user_id}")


@dataclass(frozen=True)
class Origin:
    """The message an action came from (None for a slash command)."""

    channel: str | None
    message_ts: str | None
    thread_ts: str | None = None


@dataclass(frozen=True)
class ActionRecord:
    id: int
    at: str
    user_id: str
    user_name: str
    team: str
    action: str
    server: str | None
    sdk: str | None
    version: str | None
    detail: dict[str, Any]
    channel: str | None
    message_ts: str | None
    outcome: str
    deliveries: int
    """How often Slack delivered it (a retry counts; the work was done once)."""

    def line(self) -> str:
        """One line for `status`, the run page and `/mcp-watcher status`."""
        where = f" from message {self.message_ts} in {self.channel}" if self.message_ts else " (slash command)"
        what = self.action + (f" {self.server}" if self.server else "") + (f" @ {self.version}" if self.version else "")
        return f"{self.at} {self.user_name} ({self.user_id}): {what}{where} → {self.outcome}"


def claim(
    store: Store,
    delivery: str,
    actor: Actor,
    team: str,
    action: str,
    origin: Origin,
    *,
    server: str | None = None,
    sdk: str | None = None,
    version: str | None = None,
    detail: dict[str, Any] | None = None,
) -> int | None:
    """Record an action under its delivery key; None when that delivery was handled already (a retry: counted
    in `deliveries`, nothing else done)."""
    with store.transaction() as db:
        seen = list(db.query("select id from slack_actions where delivery = ?", [delivery]))
        if seen:
            db.execute("update slack_actions set deliveries = deliveries + 1 where id = ?", [seen[0]["id"]])
            return None
        cur = db.execute(
            "insert into slack_actions (delivery, at, user_id, user_name, team, action, server, sdk, version, "
            "detail, channel, message_ts, outcome, deliveries) "
            "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 1)",
            [
                delivery,
                iso(utcnow()),
                actor.user_id,
                actor.user_name,
                team,
                action,
                server,
                sdk,
                version,
                json.dumps(detail or {}),
                origin.channel,
                origin.message_ts,
            ],
        )
        return int(cur.lastrowid) if cur.lastrowid is not None else None


def finish(store: Store, action_id: int, outcome: str) -> None:
    store.db.execute("update slack_actions set outcome = ? where id = ?", [outcome, action_id])


def _action(row: dict[str, Any]) -> ActionRecord:
    return ActionRecord(
        id=int(row["id"]),
        at=str(row["at"]),
        user_id=str(row["user_id"]),
        user_name=str(row["user_name"]),
        team=str(row["team"]),
        action=str(row["action"]),
        server=row["server"],
        sdk=row["sdk"],
        version=row["version"],
        detail=json.loads(row["detail"] or "{}"),
        channel=row["channel"],
        message_ts=row["message_ts"],
        outcome=str(row["outcome"]),
        deliveries=int(row["deliveries"] or 1),
    )


def actions(
    store: Store, *, server: str | None = None, version: str | None = None, limit: int = 50
) -> list[ActionRecord]:
    """The newest actions first, optionally of one server (and version)."""
    clauses, params = [], []
    if server is not None:
        clauses.append("server = ?")
        params.append(server)
    if version is not None:
        clauses.append("version = ?")
        params.append(version)
    where = f"where {' and '.join(clauses)}" if clauses else ""
    rows = store.db.query(f"select * from slack_actions {where} order by id desc limit ?", [*params, limit])
    return [_action(row) for row in rows]


# --- reruns -----------------------------------------------------------------------------------------------


def rerun_trigger(action_id: int) -> str:
    """The trigger of a run someone asked for in Slack (the result notice is keyed by it too)."""
    return f"slack-rerun:{action_id}"


def is_rerun_trigger(trigger: str | None) -> bool:
    return (trigger or "").startswith("slack-rerun:")


def result_after_slack(store: Store, notice: Notice, sdk: str, trigger: str | None, moment: datetime) -> Notice | None:
    """A suite result as Slack actions shape it: a rerun asked for in Slack gets a key of its own (a new reply
    in the same thread; the first result keeps its key), and a team that muted the SDK gets none (None)."""
    if is_rerun_trigger(trigger):
        return dataclasses.replace(notice, key=f"{notice.key}:{trigger}")
    if muted_until(store, notice.team, sdk, moment) is not None:
        return None
    return notice


def active_run(store: Store, server: str, version: str) -> dict[str, Any] | None:
    """A run of the server on the version that is queued or running (a second click must not add one)."""
    rows = list(
        store.db.query(
            "select id, status, trigger from runs where server = ? and sdk_version = ? and status in (?, ?) "
            "order by id limit 1",
            [server, version, *ACTIVE_RUN],
        )
    )
    return rows[0] if rows else None


def queue_rerun(store: Store, server: str, sdk: str, version: str, action_id: int) -> int | None:
    """Queue the server on the version again, unless a run of that pair is queued or running; the run's id."""
    with store.transaction() as db:
        if active_run(store, server, version) is not None:
            return None
        trigger = rerun_trigger(action_id)
        cur = db.execute(
            "insert into runs (key, server, sdk, sdk_version, trigger, status, queued) "
            "values (?, ?, ?, ?, ?, 'queued', ?)",
            [f"{server}@{version}#{trigger}", server, sdk, version, trigger, iso(utcnow())],
        )
        return int(cur.lastrowid) if cur.lastrowid is not None else None


# --- accepts ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlackAccept:
    id: int
    server: str
    team: str
    entry: dict[str, Any]
    """An accept-file entry (rule, list, name, path?, reason, expires, by)."""
    created: str
    user_id: str
    user_name: str


def _same_change(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("rule", "list", "name", "path"))


def add_accepts(
    store: Store, server: str, team: str, entries: list[dict[str, Any]], actor: Actor, action_id: int
) -> list[dict[str, Any]]:
    """Store accept entries; an entry naming a change already accepted in Slack until the same day or later
    is left out. Returns the entries stored."""
    existing = accepts(store, server)
    added = []
    with store.transaction() as db:
        for entry in entries:
            if any(_same_change(e.entry, entry) and str(e.entry["expires"]) >= str(entry["expires"]) for e in existing):
                continue
            db.execute(
                "insert into slack_accepts (server, team, entry, created, user_id, user_name, action_id) "
                "values (?, ?, ?, ?, ?, ?, ?)",
                [server, team, json.dumps(entry), iso(utcnow()), actor.user_id, actor.user_name, action_id],
            )
            added.append(entry)
    return added


def accepts(store: Store, server: str | None = None) -> list[SlackAccept]:
    return accepts_in(store.db, server)


def accepts_in(db: sqlite_utils.Database, server: str | None = None) -> list[SlackAccept]:
    """The Slack accepts in a state database (a Store's, or one opened read-only by a run)."""
    where, params = ("where server = ?", [server]) if server is not None else ("", [])
    rows = db.query(f"select * from slack_accepts {where} order by id", params)
    return [
        SlackAccept(
            id=int(r["id"]),
            server=str(r["server"]),
            team=str(r["team"]),
            entry=json.loads(r["entry"]),
            created=str(r["created"]),
            user_id=str(r["user_id"]),
            user_name=str(r["user_name"]),
        )
        for r in rows
    ]


# --- mutes ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mute:
    team: str
    sdk: str
    package: str
    until: datetime
    user_name: str
    created: str


def add_mute(store: Store, team: str, sdk: str, package: str, until: datetime, actor: Actor, action_id: int) -> None:
    store.db.execute(
        "insert into slack_mutes (team, sdk, package, until, created, user_id, user_name, action_id) "
        "values (?, ?, ?, ?, ?, ?, ?, ?)",
        [team, sdk, package, iso(until), iso(utcnow()), actor.user_id, actor.user_name, action_id],
    )


def mutes(store: Store, moment: datetime, team: str | None = None) -> list[Mute]:
    """Mutes in force at ``moment`` (the latest-ending one per team and SDK)."""
    where, params = ("where until > ?", [iso(moment)])
    if team is not None:
        where += " and team = ?"
        params.append(team)
    found: dict[tuple[str, str], Mute] = {}
    for r in store.db.query(f"select * from slack_mutes {where} order by until", params):
        until = parse_iso(r["until"])
        if until is None:
            continue
        found[(r["team"], r["sdk"])] = Mute(r["team"], r["sdk"], r["package"], until, r["user_name"], r["created"])
    return list(found.values())


def muted_until(store: Store, team: str, sdk: str, moment: datetime) -> datetime | None:
    """When the team's mute of the SDK's pre-releases ends, if one is in force at ``moment``."""
    return next((m.until for m in mutes(store, moment, team) if m.sdk == sdk), None)


# --- the message a click came from ------------------------------------------------------------------------


def notice_at(store: Store, channel: str | None, ts: str | None) -> dict[str, Any] | None:
    """The outbox row (key, thread_of, kind) of the message Slack shows at ``ts`` in ``channel``."""
    if not ts:
        return None
    rows = list(
        store.db.query(
            "select key, thread_of, kind, team from outbox where slack_ts = ? and (? is null or slack_channel = ?)",
            [ts, channel, channel],
        )
    )
    return rows[0] if rows else None
