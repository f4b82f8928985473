"""`outbox --resend-console` and `outbox --retry-failed`: second chances that follow the current config."""

from __future__ import annotations

import logging
import sys
from datetime import UTC, date, datetime

from watcher.config import LoadedConfig, WatcherConfig
from watcher.core.errors import ConfigError
from watcher.core.store import Store
from watcher.core.store_schema import OutboxRow, StoredOutboxRow
from watcher.notify.delivery import deliver_outbox, make_sink
from watcher.notify.destination import describe_destination, requeue_console
from watcher.notify.settings import slack_credentials

log = logging.getLogger(__name__)

OPERATORS = "operators"


def parse_since(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), datetime.min.time(), tzinfo=UTC)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"--since {text!r}: expected a date YYYY-MM-DD or an ISO time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def resend_console(loaded: LoadedConfig, store: Store, since_text: str | None) -> int:
    """Post console-only notices through Slack. 2 when there is still no Slack credential."""
    since = parse_since(since_text)
    settings = loaded.config.slack
    destination = describe_destination(settings, slack_credentials(settings))
    if destination.sink == "console":
        print(f"mcp-watcher: cannot resend: {destination.reason}", file=sys.stderr)
        return 2
    requeue_failed_routes = current_channels(loaded.config)
    keys = requeue_console(store, since)
    for key in keys:
        row = store.outbox_row(key)
        if row is not None:
            channel = route(row, requeue_failed_routes)
            if channel != row["channel"]:
                store.update_outbox(row["id"], channel=channel)
    report = deliver_outbox(store, make_sink(slack_credentials(settings), settings, store))
    print(f"resend: {len(keys)} console notice(s) queued, {len(report.sent)} sent through {destination.sink}")
    return 0


def current_channels(config: WatcherConfig) -> dict[str, str]:
    """Team field of an outbox row → the channel the current config gives it."""
    channels = {team.name: team.slack_channel for team in config.teams}
    if config.slack.operators_channel:
        channels[OPERATORS] = config.slack.operators_channel
    return channels


def route(row: OutboxRow | StoredOutboxRow, channels: dict[str, str]) -> str:
    """The row's channel under the current config; a team no longer configured keeps its stored channel."""
    return channels.get(row["team"], row["channel"])


def requeue_failed(config: WatcherConfig, store: Store) -> list[str]:
    """Queue every failed notice again, addressed by today's config (a fixed channel name takes effect)."""
    channels = current_channels(config)
    keys = []
    for row in store.outbox(statuses=("failed",)):
        channel = route(row, channels)
        if channel != row["channel"]:
            log.info("notice %s: %s → %s (current config)", row["key"], row["channel"], channel)
        store.update_outbox(row["id"], status="queued", channel=channel)
        keys.append(row["key"])
    return keys
