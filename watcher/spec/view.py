"""The spec's read model: its deprecated-features registry rows with their computed earliest removal, the
releases and the release calendar, and what could not be read. Read from the state, except that
``fresh_spec_view`` reads the spec first when the state has no copy or one older than ``spec_poll_minutes`` (as
the ``digest`` and ``deprecations`` commands do: the poller's last good copy is not replaced). The digest, the
pages and readiness all read the spec through it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from watcher.config import WatcherConfig
from watcher.core.store import Store
from watcher.core.timefmt import parse_iso
from watcher.spec.calendar import ReleaseCalendar
from watcher.spec.removal import DeprecationRow
from watcher.spec.revisions import SpecRevision
from watcher.spec.watch import KV_ALERTS, KV_LAST_GOOD, SpecFetch, compute, fetch_spec, fetch_spec_online


@dataclass(frozen=True)
class SpecView:
    rows: list[DeprecationRow]
    """``compute_deprecations`` objects."""
    revisions: list[SpecRevision]
    calendar: ReleaseCalendar
    problems: list[str] = field(default_factory=list)
    registry_unknown: bool = False
    """No copy of the registry at all (never read, or unreadable with nothing saved): nothing is known."""


EMPTY_BECAUSE_UNKNOWN = "the list below is empty because nothing is known, not because nothing is deprecated."


def load_spec_view(config: WatcherConfig, store: Store, today: date) -> SpecView:
    """The last good registry and releases from the state (never the network), computed for ``today``."""
    fetch = asyncio.run(fetch_spec(config, store, None))
    problems: list[str] = []
    if fetch.registry is None:
        problems.append(f"The spec's deprecated-features registry has not been read yet: {EMPTY_BECAUSE_UNKNOWN}")
    return _view(config, store, fetch, today, problems, read_now=False)


def fresh_spec_view(config: WatcherConfig, store: Store, today: date, now: datetime) -> SpecView:
    """As ``load_spec_view``, but the spec is read first when the state has no copy of the registry or one saved
    more than ``schedule.spec_poll_minutes`` before ``now``. A read that fails is named in the problems; the
    last good copy, if any, is used."""
    last_good = store.get_kv(KV_LAST_GOOD)
    saved = parse_iso(last_good.get("saved")) if last_good else None
    if saved is not None and now - saved <= timedelta(minutes=config.schedule.spec_poll_minutes):
        return load_spec_view(config, store, today)
    fetch = asyncio.run(fetch_spec_online(config, store))
    problems: list[str] = []
    if fetch.registry_error is not None:
        if fetch.registry is None:
            problems.append(
                f"The spec's deprecated-features registry could not be read ({fetch.registry_error}) and the state "
                f"has no earlier copy: {EMPTY_BECAUSE_UNKNOWN}"
            )
        else:
            problems.append(
                f"The spec registry could not be read just now ({fetch.registry_error}). The last good copy "
                f"(saved {fetch.registry_saved_at}) is shown."
            )
    if fetch.releases_error is not None:
        problems.append(
            f"The spec releases could not be read just now ({fetch.releases_error}). The releases last seen "
            f"({len(fetch.revisions)}) are used."
        )
    return _view(config, store, fetch, today, problems, read_now=True)


def _view(
    config: WatcherConfig, store: Store, fetch: SpecFetch, today: date, problems: list[str], read_now: bool
) -> SpecView:
    alerts = store.get_kv(KV_ALERTS) or {}
    for source in ("registry", "releases"):
        error = (alerts.get(source) or {}).get("error")
        if error and not read_now:  # a read just now has the last word on this source
            saved = f" (saved {fetch.registry_saved_at})" if source == "registry" and fetch.registry_saved_at else ""
            problems.append(
                f"The spec {source} cannot be read at the moment: {error}. The last good copy{saved} stays in use."
            )
    problems.extend(fetch.sep_errors.values())
    rows = compute(config, fetch, today)
    calendar = ReleaseCalendar.from_settings(config.spec.calendar)
    return SpecView(rows, list(fetch.revisions), calendar, problems, registry_unknown=fetch.registry is None)


def ordered_rows(rows: Sequence[DeprecationRow]) -> list[DeprecationRow]:
    """Deprecated rows first, soonest removal first (unresolved last, they need a human), then removed rows."""

    def key(row: DeprecationRow) -> tuple[int, int, str, str]:
        removed = row["state"] != "deprecated"
        return (int(removed), int(row["earliest_removal"] is None), row["earliest_removal"] or "", row["feature"])

    return sorted(rows, key=key)
