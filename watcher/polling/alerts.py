"""Sources that keep failing: one operator notice when a source has failed for
``schedule.source_alert_minutes``, one "recovered" notice when it reads again — and, for the digest,
the sources that could not be read during its period (so "nothing new" is never said for them).

The facts come from the recorded polls, so a restart neither forgets an outage nor repeats its alert.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from watcher.config import WatcherConfig
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.core.timefmt import iso, parse_iso, utcnow
from watcher.notify import keys
from watcher.spec.notices import render_operator
from watcher.spec.watch import operator_targets

log = logging.getLogger(__name__)

KV_OPEN = "source_down:"
"""kv key prefix → {"since", "error"} of an outage an operator was told about."""


@dataclass(frozen=True)
class Outage:
    source: str
    since: datetime
    """The first failed poll after the last good one (or the first poll ever)."""
    error: str
    last_ok: datetime | None


def outage(store: Store, source: str) -> Outage | None:
    """The source's current outage, or None when its latest poll succeeded (or it was never polled)."""
    polls = store.source_polls(source)
    if polls.latest is None or polls.latest["ok"]:
        return None
    since = parse_iso(polls.first_after_last_ok["started"]) if polls.first_after_last_ok else None
    if since is None:
        return None
    return Outage(source, since, polls.latest["error"] or "unknown error", polls.last_ok_at)


def watched_sources(config: WatcherConfig) -> list[str]:
    return [sdk.name for sdk in config.sdks] + ["spec"]


def check_sources(store: Store, config: WatcherConfig, now: datetime | None = None) -> list[str]:
    """Queue the operator notices due now; returns their keys. Call after every poll is recorded."""
    now = now or utcnow()
    limit = timedelta(minutes=config.schedule.source_alert_minutes)
    queued: list[str] = []
    for source in watched_sources(config):
        current = outage(store, source)
        opened = store.get_kv(KV_OPEN + source)
        if current is not None and now - current.since >= limit:
            if opened is None or opened.get("since") != iso(current.since):
                queued += _alert(store, config, keys.source_down(source, iso(current.since)), _down_text(current, now))
                store.set_kv(KV_OPEN + source, {"since": iso(current.since), "error": current.error})
        elif current is None and opened is not None:
            title = f"{source} can be read again"
            body = f"{source} failed from {opened['since']} until {iso(now)} and was read successfully now."
            queued += _alert(
                store, config, keys.source_recovered(source, opened["since"]), (title, body, opened["error"])
            )
            store.delete_kv(KV_OPEN + source)
    return queued


def _down_text(current: Outage, now: datetime) -> tuple[str, str, str]:
    hours = (now - current.since).total_seconds() / 3600
    last = f"last read successfully {iso(current.last_ok)}" if current.last_ok else "never read successfully"
    title = f"{current.source} cannot be read"
    body = (
        f"Every poll of {current.source} has failed since {iso(current.since)} ({hours:.1f} h; {last}). "
        "Its news is unknown until it reads again; the digest says so too."
    )
    return title, body, f"Last error: {current.error}"


def _alert(store: Store, config: WatcherConfig, key: str, content: tuple[str, str, str]) -> list[str]:
    title, body, detail = content
    if not store.add_event(key, key.split(":", 1)[0], {"title": title, "body": body, "detail": detail}):
        return []
    log.warning("%s: %s", title, body)
    text, blocks = render_operator(title, body, detail)
    queued = []
    for team, channel in operator_targets(config):
        notice_key = keys.for_channel(key, channel)
        if store.enqueue(Notice(notice_key, team, channel, "source-health", text, blocks)):
            queued.append(notice_key)
    return queued


def unchecked_sources(
    store: Store, config: WatcherConfig, sdks: list[str], since: datetime, until: datetime
) -> list[str]:
    """Digest lines for the team's sources that were not read in [since, until): failing, or never polled."""
    lines: list[str] = []
    read_ok: list[str] = []
    for sdk in sdks:
        polled, good = store.poll_tally(sdk, since, until)
        current = outage(store, sdk)
        if polled == 0 and store.source_polls(sdk).latest is None:
            continue  # a source the watcher has not started on yet: the digest's releases are simply empty
        if polled == 0:
            lines.append(f"{sdk} was not polled during this period: its releases are unknown, not absent.")
        elif current is not None and (good == 0 or current.since < until):
            lines.append(
                f"{sdk} could not be read since {iso(current.since)} ({current.error}): "
                "releases since then are unknown, not absent."
            )
        else:
            read_ok.append(sdk)
    if lines and read_ok:
        lines.append(f'"No new pre-releases or releases" covers only: {", ".join(read_ok)}.')
    elif lines:
        lines.append("No SDK source of this team was read successfully: section 3 cannot say what is new.")
    return lines


def as_json(outage_: Outage | None) -> dict[str, Any] | None:
    if outage_ is None:
        return None
    return {"since": iso(outage_.since), "error": outage_.error}
