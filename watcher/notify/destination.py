"""Where notices go and why: Slack's Web API, a webhook, or the console — said out loud, never guessed.

A first run with no Slack settings at all prints notices to the console on purpose. When the config
names Slack settings (a token variable or file of its own, an API URL, an operators' channel) but no
credential can be found, the console is a *degraded* delivery: the service says so at start, in
``status``, in ``/readyz``'s body and as a metric, and ``outbox --resend-console`` posts those notices
once a credential exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from watcher.core.store import Store
from watcher.core.store_schema import OutboxRow
from watcher.core.timefmt import iso
from watcher.notify.settings import SlackCredentials, SlackSettings

_DEFAULTS = SlackSettings()


@dataclass(frozen=True)
class Destination:
    sink: Literal["slack", "webhook", "console"]
    reason: str
    degraded: bool
    """Slack was configured but no credential was found: notices are printed, not sent."""

    def to_json(self) -> dict[str, Any]:
        return {"sink": self.sink, "reason": self.reason, "degraded": self.degraded}


def slack_configured(settings: SlackSettings) -> bool:
    """True when the config asks for Slack in any way beyond the shipped defaults."""
    fields = ("token_env", "token_file", "webhook_env", "webhook_file", "api_url", "operators_channel")
    return any(getattr(settings, name) != getattr(_DEFAULTS, name) for name in fields)


def _missing(settings: SlackSettings) -> tuple[str, str]:
    """(the main reason, the other unset sources) for a console delivery."""
    where = []
    if settings.token_env:
        where.append(f"Slack token variable {settings.token_env} is not set")
    if settings.token_file:
        where.append(f"Slack token file {settings.token_file} is empty")
    if settings.webhook_env:
        where.append(f"webhook variable {settings.webhook_env} is not set")
    if settings.webhook_file:
        where.append(f"webhook file {settings.webhook_file} is empty")
    if not where:
        return "no Slack token or webhook is configured", ""
    return where[0], (f" (also: {', '.join(where[1:])})" if where[1:] else "")


def describe_destination(settings: SlackSettings, credentials: SlackCredentials) -> Destination:
    if credentials.token:
        source = f"variable {settings.token_env}" if settings.token_env else f"file {settings.token_file}"
        return Destination("slack", f"Slack Web API (token from {source})", degraded=False)
    if credentials.webhook_url:
        return Destination("webhook", "Slack incoming webhook (no threads, no files)", degraded=False)
    degraded = slack_configured(settings)
    why, also = _missing(settings)
    tail = (
        "; run `mcp-watcher outbox --resend-console` once it is set"
        if degraded
        else "; no Slack settings: first-run console mode"
    )
    return Destination("console", f"{why}: notices go to the console{also}{tail}", degraded=degraded)


def console_rows(store: Store, since: datetime | None = None) -> list[OutboxRow]:
    """Notices that were only printed to the console (optionally: delivered at or after ``since``)."""
    rows = store.outbox(statuses=("console",))
    if since is not None:
        cut = iso(since) or ""
        rows = [r for r in rows if (r["sent_at"] or r["created"] or "") >= cut]
    return rows


def requeue_console(store: Store, since: datetime | None = None) -> list[str]:
    """Put console-only notices back in the queue for a real sink. Each is then sent once: a sent row
    is no longer "console", so a second resend finds nothing."""
    keys = []
    for row in console_rows(store, since):
        store.update_outbox(row["id"], status="queued", sent_at=None, last_error="resent from the console")
        keys.append(row["key"])
    return keys
