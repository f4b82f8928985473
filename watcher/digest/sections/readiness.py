"""Section 4's readiness lines: per upcoming revision, how many servers are ready and what the team has to fix
("Ready for 2027-03-30: 12 of 40 servers; yours: 3 to fix"), from the state the readiness pass stored."""

from __future__ import annotations

from datetime import date

from watcher.config import WatcherConfig
from watcher.core.store import Store
from watcher.readiness.view import collect_readiness, digest_line


def readiness_lines(config: WatcherConfig, store: Store, team: str, today: date) -> list[str]:
    lines = []
    for revision in collect_readiness(config, store, today):
        line = digest_line(revision, team)
        days = revision.days_left
        lines.append(f"{line} (projected release {revision.release}, in {days} days)" if days >= 0 else line)
    return lines
