"""Outbox delivery: Slack Web API, incoming webhook, or the console.

Every notice sits in the outbox under an idempotency key before anything is sent. A row moves
queued → sending → posted (message in Slack, files pending) → sent. A crash while a row is
"sending" leaves the outcome unknown; on the next pass the Web API sink looks for a message that
carries the row's key in its message metadata before posting again, so a restart never sends a
notice twice and never loses one. Slack being down or rate limited leaves rows queued for later.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol, TextIO

from prometheus_client import Counter
from slack_sdk import WebClient, WebhookClient
from slack_sdk.errors import SlackApiError, SlackClientError

from watcher.core.errors import WatcherError
from watcher.core.store import Store
from watcher.core.store_schema import OutboxRow
from watcher.core.text import shown
from watcher.core.timefmt import iso, parse_iso, utcnow
from watcher.notify import keys
from watcher.notify.blocks import for_console, guard
from watcher.notify.retry import post_handlers, read_handlers
from watcher.notify.settings import SlackCredentials, SlackSettings

log = logging.getLogger(__name__)

METADATA_EVENT = "mcp_watcher_notice"

# Slack's refusals by kind, for /metrics (process-local: they are not stored anywhere else).
SLACK_ERRORS = Counter("mcp_watcher_slack_errors", "Slack delivery errors by kind", ["kind"], registry=None)

# Errors that no retry of the same message will fix; the row is marked failed with the reason.
PERMANENT_ERRORS = frozenset(
    {
        "channel_not_found",
        "not_in_channel",
        "is_archived",
        "invalid_blocks",
        "invalid_blocks_format",
        "msg_too_long",
        "no_text",
        "restricted_action",
        "too_many_attachments",
        "invalid_arguments",
    }
)
# Errors that concern the credentials: every row would fail the same way, so stop this pass, keep rows.
AUTH_ERRORS = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked", "missing_scope"})


class DeliveryError(WatcherError):
    def __init__(
        self,
        reason: str,
        *,
        permanent: bool = False,
        auth: bool = False,
        kind: str = "other",
        unknown: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind
        self.permanent = permanent
        self.auth = auth
        self.unknown = unknown
        """Slack may or may not have the message: the row stays "sending" until a lookup answers."""


@dataclass(frozen=True)
class Posted:
    channel: str
    ts: str | None


class Sink(Protocol):
    name: str

    def post(self, row: OutboxRow, thread_ts: str | None, thread_channel: str | None) -> Posted: ...

    def find_posted(self, row: OutboxRow, thread_ts: str | None, thread_channel: str | None) -> Posted | None:
        """After a crash mid-send: the message if Slack already has it, else None."""
        ...

    def upload(self, row: OutboxRow, posted: Posted) -> None: ...


def _slack_error(exc: Exception) -> DeliveryError:
    """Slack's failure as a DeliveryError. Anything but a clear answer leaves the outcome unknown."""
    if isinstance(exc, SlackApiError):
        error = str(exc.response.get("error") or f"HTTP {exc.response.status_code}")
        if exc.response.status_code == 429:
            return DeliveryError(f"rate limited by Slack ({error}); will retry", kind="rate_limited")
        if exc.response.status_code >= 500:
            return DeliveryError(f"Slack answered HTTP {exc.response.status_code}", kind="server_error", unknown=True)
        return DeliveryError(error, permanent=error in PERMANENT_ERRORS, auth=error in AUTH_ERRORS, kind=error)
    if isinstance(exc, TimeoutError):
        return DeliveryError(f"no answer from Slack in time ({exc or 'read timeout'})", kind="timeout", unknown=True)
    return DeliveryError(f"cannot reach Slack: {type(exc).__name__}: {exc}", kind="connection", unknown=True)


def channel_id(client: WebClient, store: Store, channel: str) -> str | None:
    """The id of a channel given as ``#name`` (looked up once through conversations.list, then kept in the
    store), or ``channel`` itself when it is an id already; None when no such channel is visible."""
    if not channel.startswith("#"):
        return channel
    cached: str | None = store.get_kv(keys.slack_channel_id(channel))
    if cached:
        return cached
    cursor = None
    while True:
        response = client.conversations_list(
            types="public_channel,private_channel", limit=500, cursor=cursor, exclude_archived=True
        )
        channels: list[dict[str, Any]] = response.get("channels", [])  # Slack's JSON
        for item in channels:
            if item.get("name") == channel.lstrip("#"):
                store.set_kv(keys.slack_channel_id(channel), item["id"])
                return str(item["id"])
        cursor = (response.get("response_metadata") or {}).get("next_cursor")
        if not cursor:
            return None


class WebApiSink:
    """chat.postMessage with Block Kit; replies use thread_ts; files via files_upload_v2."""

    name = "slack"

    def __init__(self, token: str, settings: SlackSettings, store: Store) -> None:
        kwargs: dict[str, Any] = {"token": token, "timeout": max(1, int(settings.timeout_seconds))}
        if settings.api_url:
            kwargs["base_url"] = settings.api_url if settings.api_url.endswith("/") else settings.api_url + "/"
        wait = settings.max_retry_after_seconds
        self.client = WebClient(**kwargs)  # lookups and uploads: safe to retry
        self.client.retry_handlers.clear()
        self.client.retry_handlers.extend(read_handlers(settings.retries, wait))
        self.poster = WebClient(**kwargs)  # chat.postMessage: retried only on a 429 (never posted)
        self.poster.retry_handlers.clear()
        self.poster.retry_handlers.extend(post_handlers(settings.retries, wait))
        self.store = store

    def post(self, row: OutboxRow, thread_ts: str | None, thread_channel: str | None) -> Posted:
        text, blocks = guard(row["text"], row["blocks"] or None)
        try:
            response = self.poster.chat_postMessage(
                channel=thread_channel or row["channel"],
                text=text,
                blocks=blocks,
                thread_ts=thread_ts,
                metadata={"event_type": METADATA_EVENT, "event_payload": {"key": row["key"]}},
                unfurl_links=False,
            )
        except (SlackClientError, OSError) as exc:
            raise _slack_error(exc) from None
        return Posted(channel=str(response["channel"]), ts=str(response["ts"]))

    def find_posted(self, row: OutboxRow, thread_ts: str | None, thread_channel: str | None) -> Posted | None:
        try:
            channel = thread_channel or self._channel_id(row["channel"])
            if channel is None:
                return None
            created = parse_iso(row["created"])
            oldest = f"{(created - timedelta(minutes=5)).timestamp():.6f}" if created else None
            if thread_ts:
                response = self.client.conversations_replies(
                    channel=channel, ts=thread_ts, include_all_metadata=True, limit=200
                )
            else:
                response = self.client.conversations_history(
                    channel=channel, include_all_metadata=True, oldest=oldest, limit=200
                )
        except (SlackClientError, OSError) as exc:
            error = _slack_error(exc)
            error.unknown = not error.permanent
            error.reason = f"outcome unknown, lookup by key failed: {error.reason}"
            raise error from None
        messages: list[dict[str, Any]] = response.get("messages", [])  # Slack's JSON
        for message in messages:
            payload = (message.get("metadata") or {}).get("event_payload") or {}
            if payload.get("key") == row["key"]:
                return Posted(channel=channel, ts=message["ts"])
        return None

    def _channel_id(self, channel: str) -> str | None:
        return channel_id(self.client, self.store, channel)

    def upload(self, row: OutboxRow, posted: Posted) -> None:
        for item in row["files"]:
            try:
                self.client.files_upload_v2(
                    channel=posted.channel,
                    thread_ts=posted.ts,
                    file=item["path"],
                    filename=item.get("filename"),
                    title=item.get("title"),
                )
            except SlackClientError as exc:
                raise _slack_error(exc) from None
            except OSError as exc:
                if not Path(item["path"]).is_file():
                    raise DeliveryError(f"cannot read {item['path']}: {exc.strerror}", permanent=True) from None
                raise _slack_error(exc) from None


class WebhookSink:
    """An incoming webhook posts to one fixed channel; it cannot thread, upload or look back."""

    name = "webhook"

    def __init__(self, url: str, settings: SlackSettings) -> None:
        self.client = WebhookClient(
            url,
            timeout=max(1, int(settings.timeout_seconds)),
            retry_handlers=post_handlers(settings.retries, settings.max_retry_after_seconds),
        )

    def post(self, row: OutboxRow, thread_ts: str | None, thread_channel: str | None) -> Posted:
        text, blocks = guard(row["text"], row["blocks"] or None)
        try:
            response = self.client.send(text=text, blocks=blocks, unfurl_links=False)
        except SlackClientError as exc:
            raise _slack_error(exc) from None
        except OSError as exc:
            raise DeliveryError(f"cannot reach Slack: {exc}") from None
        if response.status_code == 200:
            return Posted(channel=row["channel"], ts=None)
        body = (response.body or "").strip()
        if response.status_code == 429 or response.status_code >= 500:
            raise DeliveryError(f"webhook answered HTTP {response.status_code}; will retry")
        raise DeliveryError(body or f"HTTP {response.status_code}", permanent=body in PERMANENT_ERRORS)

    def find_posted(self, row: OutboxRow, thread_ts: str | None, thread_channel: str | None) -> Posted | None:
        return None  # a webhook cannot read back; a crash mid-send may repeat that one message

    def upload(self, row: OutboxRow, posted: Posted) -> None:
        return None  # files need the Web API; the message text says where the file is


class ConsoleSink:
    """No Slack credentials: notices are printed, and stay in the outbox as delivered-to-console."""

    name = "console"

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def post(self, row: OutboxRow, thread_ts: str | None, thread_channel: str | None) -> Posted:
        stream = self.stream or sys.stdout
        reply = " (thread reply)" if row["thread_of"] else ""
        print(shown(f"--- notice for {row['team']} → {row['channel']}{reply} [{row['key']}]"), file=stream)
        print(for_console(row["text"]), file=stream)
        for item in row["files"]:
            print(f"    file: {item['path']}", file=stream)
        stream.flush()
        return Posted(channel=row["channel"], ts=None)

    def find_posted(self, row: OutboxRow, thread_ts: str | None, thread_channel: str | None) -> Posted | None:
        return None

    def upload(self, row: OutboxRow, posted: Posted) -> None:
        return None


def make_sink(
    credentials: SlackCredentials, settings: SlackSettings, store: Store, stream: TextIO | None = None
) -> Sink:
    if credentials.token:
        return WebApiSink(credentials.token, settings, store)
    if credentials.webhook_url:
        return WebhookSink(credentials.webhook_url, settings)
    return ConsoleSink(stream)


@dataclass
class DeliveryReport:
    sent: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    retry_later: dict[str, str] = field(default_factory=dict)
    deferred: list[str] = field(default_factory=list)

    @property
    def delivered(self) -> int:
        return len(self.sent)


_PENDING = ("queued", "sending", "posted")


def deliver_outbox(store: Store, sink: Sink, limit: int | None = None) -> DeliveryReport:
    """Send what the outbox holds, oldest first. Never raises for Slack's failures: they are recorded."""
    report = DeliveryReport()
    done_status = "console" if sink.name == "console" else "sent"
    for row in store.outbox(statuses=_PENDING, limit=limit):
        thread_ts = thread_channel = None
        if row["thread_of"]:
            parent = store.outbox_row(row["thread_of"])
            if parent is not None and parent["status"] in _PENDING:
                report.deferred.append(row["key"])  # the thread does not exist yet
                continue
            if parent is not None and parent["slack_ts"]:
                thread_ts, thread_channel = parent["slack_ts"], parent["slack_channel"]
        try:
            posted = _deliver_one(store, sink, row, thread_ts, thread_channel)
        except DeliveryError as exc:
            SLACK_ERRORS.labels(kind=exc.kind).inc()
            if exc.permanent:
                store.update_outbox(row["id"], status="failed", last_error=exc.reason)
                report.failed[row["key"]] = exc.reason
                log.error(
                    "notice %s to %s failed for good: %s",
                    row["key"],
                    row["channel"],
                    exc.reason,
                    extra={"notice": row["key"]},
                )
                continue
            # Back to "queued" only if nothing reached Slack; a posted message keeps its state, and a send
            # whose outcome is unknown stays "sending" until a lookup by its key answers.
            current = store.outbox_row(row["key"])
            if current and current["status"] == "posted":
                status = "posted"
            elif exc.unknown and current and current["status"] == "sending":
                status = "sending"
            else:
                status = "queued"
            store.update_outbox(row["id"], status=status, last_error=exc.reason)
            report.retry_later[row["key"]] = exc.reason
            log.warning(
                "notice %s to %s not delivered yet: %s",
                row["key"],
                row["channel"],
                exc.reason,
                extra={"notice": row["key"]},
            )
            if exc.auth:
                log.error("Slack rejected the credentials (%s): delivery paused, notices kept", exc.reason)
                break
            if exc.kind == "rate_limited":
                break  # Slack asked for a longer wait than we block for: the next pass goes on
            continue
        store.update_outbox(
            row["id"],
            status=done_status,
            sent_at=iso(utcnow()),
            slack_channel=posted.channel,
            slack_ts=posted.ts,
            last_error=None,
        )
        report.sent.append(row["key"])
    return report


def _deliver_one(store: Store, sink: Sink, row: OutboxRow, thread_ts: str | None, thread_channel: str | None) -> Posted:
    posted: Posted | None = None
    if row["status"] == "posted":
        # "posted" is only ever stored together with the message's channel and ts (see below).
        assert row["slack_channel"] is not None and row["slack_ts"] is not None
        posted = Posted(channel=row["slack_channel"], ts=row["slack_ts"])
    elif row["status"] == "sending":
        posted = sink.find_posted(row, thread_ts, thread_channel)
    if posted is None:
        store.update_outbox(row["id"], status="sending", attempts=(row["attempts"] or 0) + 1)
        try:
            posted = sink.post(row, thread_ts, thread_channel)
        except DeliveryError as exc:
            if not exc.unknown or exc.kind != "server_error":
                raise  # after a timeout Slack may still be storing it: the next pass looks it up
            # Slack answered 5xx, it may have stored it: ask by key now. A failed lookup leaves it "sending".
            posted = sink.find_posted(row, thread_ts, thread_channel)
            if posted is None:
                raise DeliveryError(
                    f"{exc.reason}; a lookup by key found no such message: will post again",
                    kind=exc.kind,
                ) from None
            log.info("notice %s: Slack answered %s but has the message", row["key"], exc.reason)
    if row["files"]:
        store.update_outbox(row["id"], status="posted", slack_channel=posted.channel, slack_ts=posted.ts)
        sink.upload(row, posted)
    return posted
