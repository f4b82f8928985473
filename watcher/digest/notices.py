"""The digest as outbox notices: one parent message (its key, with the timeline PNG as its file) and, when
Slack's limits need it, replies in its thread (``keys.digest_reply``)."""

from __future__ import annotations

import re
from pathlib import Path

from watcher.core.store_schema import Notice
from watcher.digest.model import DIGEST_KIND, Digest
from watcher.digest.slack import slack_messages
from watcher.notify import keys


def safe_name(text: str) -> str:
    """``text`` made safe for a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def digest_notices(digest: Digest, key: str, picture: Path) -> list[Notice]:
    """Every notice of one digest under the parent's ``key``: the parent first, then the thread replies."""
    notices = []
    for number, message in enumerate(slack_messages(digest, has_picture=True), 1):
        first = number == 1
        notices.append(
            Notice(
                key=key if first else keys.digest_reply(key, number),
                team=digest.team,
                channel=digest.channel,
                kind=DIGEST_KIND,
                text=message.text,
                blocks=message.blocks,
                thread_of=None if first else key,
                files=[
                    {
                        "path": str(picture),
                        "title": f"Deprecation timeline · {digest.team} · {digest.week}",
                        "filename": f"deprecation-timeline-{safe_name(digest.team)}-{digest.week}.png",
                    }
                ]
                if first
                else None,
            )
        )
    return notices
