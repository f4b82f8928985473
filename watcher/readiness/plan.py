"""Which requirement sets are new, which revision each counts toward, and what each server runs on.

A set is *new* when no configured server runs it and it is ``draft`` (an undated set: it counts toward the
calendar's next projected revision) or a revision later than the newest released one. A dated set is run by
name (``--requirements``); a set the CLI does not accept by name is run the way it allows
(``--spec-version <set> --suite all``) and judged against the scenarios its file lists.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from watcher.config import WatcherConfig
from watcher.core.store import Store
from watcher.sources.versions import sort_key
from watcher.spec.calendar import ReleaseCalendar, next_release
from watcher.spec.revisions import SpecRevision, current_revision
from watcher.suites.settings import Server

DATED = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Target:
    set_name: str
    revision: str
    """The revision the set counts toward (YYYY-MM-DD)."""
    release: date
    """Its projected (or RC-planned) release date."""


def is_dated(set_name: str) -> bool:
    return bool(DATED.match(set_name))


def cli_arguments(set_name: str) -> list[str]:
    """How the suite's CLI is asked for this set: by name when dated, else at its wire over every scenario."""
    if is_dated(set_name):
        return ["--requirements", set_name]
    return ["--spec-version", set_name, "--suite", "all"]


def next_projected(calendar: ReleaseCalendar, revisions: Sequence[SpecRevision], today: date) -> date | None:
    slot = next_release(calendar, revisions, today - timedelta(days=1), today)
    return slot.date if slot else None


def target_of(
    set_name: str, calendar: ReleaseCalendar, revisions: Sequence[SpecRevision], today: date
) -> Target | None:
    """The revision a set counts toward: its own date, or (``draft``) the next projected revision."""
    if is_dated(set_name):
        day = date.fromisoformat(set_name)
        return Target(set_name, set_name, day)
    upcoming = next_projected(calendar, revisions, today)
    return Target(set_name, upcoming.isoformat(), upcoming) if upcoming else None


def new_sets(
    config: WatcherConfig,
    sets: Sequence[str],
    calendar: ReleaseCalendar,
    revisions: Sequence[SpecRevision],
    today: date,
) -> list[Target]:
    """The sets no server runs yet that belong to an upcoming revision."""
    running = {r for server in config.servers for r in server.requirements}
    current = current_revision(revisions)
    out = []
    for name in sorted(sets):
        if name in running:
            continue
        target = target_of(name, calendar, revisions, today)
        if target is None:
            continue
        if is_dated(name) and current is not None and name <= current.revision:
            continue  # a released revision's set is not "the next revision"
        if target.release < today - timedelta(days=1) and is_dated(name):
            continue
        out.append(target)
    return out


def rc_targets(revisions: Sequence[SpecRevision]) -> list[str]:
    """Revisions with a release candidate and no final release yet: their readiness windows are open."""
    released = {r.revision for r in revisions if not r.prerelease}
    return sorted({r.revision for r in revisions if r.prerelease and r.revision not in released})


def sdk_version_for(config: WatcherConfig, store: Store, server: Server) -> str | None:
    """The SDK's newest pre-release the watcher knows, else its newest release; None: nothing known yet."""
    registry = next((s.registry for s in config.sdks if s.name == server.sdk), None)
    if registry is None:
        return None
    rows = [r for r in store.versions_of(server.sdk) if not r["yanked"]]
    newest = {
        kind: max(
            (r["version"] for r in rows if bool(r["prerelease"]) == kind),
            key=lambda v: sort_key(registry, v),
            default=None,
        )
        for kind in (True, False)
    }
    pre, final = newest[True], newest[False]
    if pre is not None and (final is None or sort_key(registry, pre) > sort_key(registry, final)):
        return pre
    return final
