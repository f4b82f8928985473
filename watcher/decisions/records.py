"""What people did from Slack, kept in the state database: actions (who, what, when, from which message),
the accept entries and the mutes they made. The store holds their SQL (`watcher.core.store_decisions`, and the
run queue's `queue_rerun`); this module turns its rows into records."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import datetime

import pydantic
from typing_extensions import TypedDict

from watcher.core.contract_doc import AcceptEntryRecord
from watcher.core.store import Store
from watcher.core.store_decisions import ActionRow, MuteRow, NewAction, NoticeRef, SlackAcceptRow
from watcher.core.store_schema import ActiveRun, Notice
from watcher.core.timefmt import iso, parse_iso, utcnow
from watcher.notify.blocks import Mrkdwn, escape


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


class AcceptDetail(TypedDict):
    """An `accept` action's detail: the changes accepted (as labelled in the modal), why, and until when."""

    changes: list[str]
    reason: str
    expires: str


class MuteDetail(TypedDict):
    """A `mute` action's detail: for how many days, and until when (ISO time)."""

    days: int
    until: str


@pydantic.with_config(pydantic.ConfigDict(extra="forbid"))
class NoDetail(TypedDict):
    """The detail of an action that has none (a rerun)."""


ActionDetail = AcceptDetail | MuteDetail | NoDetail
"""What an action records beside who, what and where (the `detail` column, JSON): one shape per action."""

_DETAIL: pydantic.TypeAdapter[ActionDetail] = pydantic.TypeAdapter(ActionDetail)
_ENTRY: pydantic.TypeAdapter[AcceptEntryRecord] = pydantic.TypeAdapter(AcceptEntryRecord)


def _stored_detail(text: str | None) -> ActionDetail:
    """An action's stored detail, checked against the action's shapes (a detail of no known shape is refused)."""
    data = json.loads(text or "{}")
    _DETAIL.validate_python(data)
    detail: ActionDetail = data  # validated just above
    return detail


def _stored_entry(text: str) -> AcceptEntryRecord:
    """A Slack accept's stored entry, checked against the accept entry's shape."""
    data = json.loads(text)
    _ENTRY.validate_python(data)
    entry: AcceptEntryRecord = data  # validated just above
    return entry


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
    detail: ActionDetail
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
    detail: AcceptDetail | MuteDetail | None = None,
) -> int | None:
    """Record an action under its delivery key; None when that delivery was handled already (a retry: counted
    in `deliveries`, nothing else done)."""
    return store.claim_action(
        NewAction(
            delivery=delivery,
            at=iso(utcnow()),
            user_id=actor.user_id,
            user_name=actor.user_name,
            team=team,
            action=action,
            server=server,
            sdk=sdk,
            version=version,
            detail=json.dumps(detail or {}),
            channel=origin.channel,
            message_ts=origin.message_ts,
        )
    )


def finish(store: Store, action_id: int, outcome: str) -> None:
    store.finish_action(action_id, outcome)


def _action(row: ActionRow) -> ActionRecord:
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
        detail=_stored_detail(row["detail"]),
        channel=row["channel"],
        message_ts=row["message_ts"],
        outcome=str(row["outcome"]),
        deliveries=int(row["deliveries"] or 1),
    )


def actions(
    store: Store, *, server: str | None = None, version: str | None = None, limit: int = 50
) -> list[ActionRecord]:
    """The newest actions first, optionally of one server (and version)."""
    return [_action(row) for row in store.action_rows(server, version, limit)]


# --- reruns -----------------------------------------------------------------------------------------------


def rerun_trigger(action_id: int) -> str:
    """The trigger of a run someone asked for in Slack (the result notice is keyed by it too)."""
    return f"slack-rerun:{action_id}"


def is_rerun_trigger(trigger: str | None) -> bool:
    return (trigger or "").startswith("slack-rerun:")


def result_after_slack(
    store: Store, notice: Notice, sdk: str, version: str, trigger: str | None, moment: datetime
) -> Notice | None:
    """A suite result as Slack actions shape it: a rerun asked for in Slack gets a key of its own (a new reply
    in the same thread; the first result keeps its key), and a team that muted the SDK's pre-releases gets none
    for a pre-release (None). A mute silences a beta line, never a final release nor a version never polled."""
    if is_rerun_trigger(trigger):
        return dataclasses.replace(notice, key=f"{notice.key}:{trigger}")
    if store.is_prerelease(sdk, version) and muted_until(store, notice.team, sdk, moment) is not None:
        return None
    return notice


def active_run(store: Store, server: str, version: str) -> ActiveRun | None:
    """A run of the server on the version that is queued or running (a second click must not add one)."""
    found = store.active_run(server, version)
    return found.copy() if found is not None else None


def queue_rerun(store: Store, server: str, sdk: str, version: str, action_id: int) -> int | None:
    """Queue the server on the version again, unless a run of that pair is queued or running; the run's id."""
    return store.queue_rerun(server, sdk, version, rerun_trigger(action_id))


# --- accepts ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlackAccept:
    id: int
    server: str
    team: str
    entry: AcceptEntryRecord
    """An accept-file entry (rule, list, name, path?, reason, expires, by)."""
    created: str
    user_id: str
    user_name: str


def _same_change(a: AcceptEntryRecord, b: AcceptEntryRecord) -> bool:
    return all(a.get(k) == b.get(k) for k in ("rule", "list", "name", "path"))


def add_accepts(
    store: Store, server: str, team: str, entries: list[AcceptEntryRecord], actor: Actor, action_id: int
) -> list[AcceptEntryRecord]:
    """Store accept entries; an entry naming a change already accepted in Slack until the same day or later
    is left out. Returns the entries stored."""
    existing = accepts(store, server)
    added = [
        entry
        for entry in entries
        if not any(_same_change(e.entry, entry) and str(e.entry["expires"]) >= str(entry["expires"]) for e in existing)
    ]
    created = iso(utcnow())
    store.add_slack_accepts(
        [
            SlackAcceptRow(
                id=0,
                server=server,
                team=team,
                entry=json.dumps(entry),
                created=created,
                user_id=actor.user_id,
                user_name=actor.user_name,
                action_id=action_id,
            )
            for entry in added
        ]
    )
    return added


def accepts(store: Store, server: str | None = None) -> list[SlackAccept]:
    return accepts_of(store.slack_accepts(server))


def accepts_of(rows: list[SlackAcceptRow]) -> list[SlackAccept]:
    """Slack accepts from their stored rows (a Store's, or a state read read-only by a run)."""
    return [
        SlackAccept(
            id=int(r["id"]),
            server=str(r["server"]),
            team=str(r["team"]),
            entry=_stored_entry(r["entry"]),
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
    store.add_mute(
        MuteRow(
            team=team,
            sdk=sdk,
            package=package,
            until=iso(until),
            created=iso(utcnow()),
            user_id=actor.user_id,
            user_name=actor.user_name,
            action_id=action_id,
        )
    )


def mutes(store: Store, moment: datetime, team: str | None = None) -> list[Mute]:
    """Mutes in force at ``moment`` (the latest-ending one per team and SDK)."""
    found: dict[tuple[str, str], Mute] = {}
    for r in store.mute_rows(iso(moment), team):
        until = parse_iso(r["until"])
        if until is None:
            continue
        found[(r["team"], r["sdk"])] = Mute(r["team"], r["sdk"], r["package"], until, r["user_name"], r["created"])
    return list(found.values())


def muted_until(store: Store, team: str, sdk: str, moment: datetime) -> datetime | None:
    """When the team's mute of the SDK's pre-releases ends, if one is in force at ``moment``."""
    return next((m.until for m in mutes(store, moment, team) if m.sdk == sdk), None)


# --- the message a click came from ------------------------------------------------------------------------


def notice_at(store: Store, channel: str | None, ts: str | None) -> NoticeRef | None:
    """The outbox row (key, thread_of, kind) of the message Slack shows at ``ts`` in ``channel``."""
    if not ts:
        return None
    found = store.notice_at(channel, ts)
    return found.copy() if found is not None else None
