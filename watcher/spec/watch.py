"""Poll the spec sources, compare with the last good state, turn each change into events and notices.

State kept in the store's kv (all JSON):

- ``spec.registry.last_good``: the last registry that parsed, its computed rows, a generation number.
  A registry that cannot be fetched or parsed never replaces it: the last good copy stays in use.
- ``spec.revisions``: the spec releases seen last time.
- ``spec.sep_final``: SEP Final dates found on GitHub (a Final date does not change).
- ``spec.alerts``: per source ("registry", "releases"), the error being reported and an episode number.

Idempotency: each change is an event whose key is stable for that change (registry changes carry the
generation they produce; releases carry their tag), and one notice per subscribed team whose key is the
event key + the team. A crash before the new state is saved repeats the same keys, which the store ignores.

Operator alerts go to ``slack.operators_channel`` (team field "operators"); when that is unset, to every
distinct team channel (every team, not only those with ``spec_news``: a stale registry affects all).
One alert per distinct error until the source recovers, then one "readable again".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypedDict

import httpx

from watcher.config import LoadedConfig, WatcherConfig
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.core.timefmt import iso, today_utc, utcnow
from watcher.notify import keys
from watcher.sources.base import FetchStats, RegistryHttp, SourceError
from watcher.spec import seps
from watcher.spec.calendar import ReleaseCalendar
from watcher.spec.notices import Change, render_change, render_operator
from watcher.spec.registry import Registry, RegistryFormatError, parse_registry
from watcher.spec.removal import DeprecationRow, compute_deprecations, needed_seps
from watcher.spec.revisions import SpecRevision, current_revision, fetch_revisions, new_revisions

log = logging.getLogger(__name__)

KV_LAST_GOOD = "spec.registry.last_good"
KV_REVISIONS = "spec.revisions"
KV_ALERTS = "spec.alerts"
OPERATORS = "operators"


class SpecState(TypedDict):
    """The last good spec registry as kept in the store (``KV_LAST_GOOD``): its rows, as computed, by key."""

    registry: dict[str, Any]
    """``Registry.to_json()``."""
    computed: dict[str, DeprecationRow]
    generation: int
    saved: str | None


@dataclass
class SpecFetch:
    """What one round of fetching found; the last good copies fill in for what could not be read."""

    registry: Registry | None
    registry_error: str | None = None
    registry_from_state: bool = False
    """True: ``registry`` is the last good copy from the state, not what was just fetched."""
    registry_saved_at: str | None = None
    not_modified: bool = False
    revisions: list[SpecRevision] = field(default_factory=list)
    releases_error: str | None = None
    sep_final: dict[int, date] = field(default_factory=dict)
    sep_errors: dict[int, str] = field(default_factory=dict)
    stats: FetchStats = field(default_factory=FetchStats)


async def fetch_spec(config: WatcherConfig, store: Store, client: httpx.AsyncClient | None) -> SpecFetch:
    """Fetch registry, releases and the SEP Final dates they need. ``client`` None: offline (state only).

    Writes only caches (HTTP bodies, SEP dates); the last good registry/releases are ``poll_spec``'s to save.
    """
    settings = config.spec
    last_good = store.get_kv(KV_LAST_GOOD)
    stored_registry = Registry.from_json(last_good["registry"]) if last_good else None
    stored_revisions = [SpecRevision.from_json(r) for r in store.get_kv(KV_REVISIONS) or []]
    http = RegistryHttp(client, store, config.http_client) if client is not None else None
    result = SpecFetch(registry=None, revisions=stored_revisions)
    if http is None:
        result.registry_error = "offline: not fetched"
        result.releases_error = "offline: not fetched"
    else:
        result.stats = http.stats
        try:
            fetched = await http.get(settings.registry_url)
            assert fetched is not None
            result.not_modified = fetched.not_modified
            result.registry = parse_registry(fetched.text(), settings.registry_url)
        except SourceError as exc:
            result.registry_error = f"cannot read the registry: {exc}"
        except RegistryFormatError as exc:
            result.registry_error = str(exc)
        try:
            result.revisions = await fetch_revisions(http, settings)
        except SourceError as exc:
            result.releases_error = f"cannot read the spec releases: {exc}"
    if result.registry is None and stored_registry is not None:
        result.registry = stored_registry
        result.registry_from_state = True
        result.registry_saved_at = last_good.get("saved")
    if result.registry is not None:
        cache = store.get_kv(seps.KV_KEY) or {}
        dates, errors, updated = await seps.resolve_final_dates(
            http, settings, needed_seps(result.registry.rows), cache
        )
        if updated != cache:
            store.set_kv(seps.KV_KEY, updated)
        result.sep_final, result.sep_errors = dates, errors
    return result


async def fetch_spec_online(config: WatcherConfig, store: Store) -> SpecFetch:
    """``fetch_spec`` over a client of its own (the commands that read the spec outside a poll)."""
    headers = {"User-Agent": config.http_client.user_agent}
    async with httpx.AsyncClient(headers=headers, follow_redirects=True) as client:
        return await fetch_spec(config, store, client)


def compute(config: WatcherConfig, fetch: SpecFetch, today: date) -> list[DeprecationRow]:
    if fetch.registry is None:
        return []
    calendar = ReleaseCalendar.from_settings(config.spec.calendar)
    return compute_deprecations(fetch.registry, calendar, fetch.revisions, fetch.sep_final, today, fetch.sep_errors)


async def poll_spec(
    loaded: LoadedConfig, store: Store, http_client: httpx.AsyncClient, today: date | None = None
) -> dict[str, Any]:
    """Poll once: fetch, diff with the last good state, record events, enqueue notices. Never raises for an
    outside failure: the summary says what happened (``ok``/``error``, ``changes``, ``baseline``…)."""
    config = loaded.config
    today = today or today_utc()
    fetch = await fetch_spec(config, store, http_client)
    summary: dict[str, Any] = {
        "source": "spec",
        "ok": fetch.registry_error is None,
        "error": fetch.registry_error,
        "releases_error": fetch.releases_error,
        "baseline": False,
        "revisions_baseline": False,
        "not_modified": fetch.not_modified,
        "using_last_good": fetch.registry_from_state,
        "changes": [],
        "notices": 0,
        "requests": fetch.stats.requests,
        "bytes": fetch.stats.bytes,
    }
    enqueued = _source_health(store, config, "registry", fetch.registry_error)
    enqueued += _source_health(store, config, "releases", fetch.releases_error)

    changes: list[Change] = []
    if fetch.releases_error is None:
        previous = store.get_kv(KV_REVISIONS)
        if previous is None:
            summary["revisions_baseline"] = True
        else:
            changes += _revision_changes([SpecRevision.from_json(r) for r in previous], fetch.revisions)
    current = current_revision(fetch.revisions)
    summary["current_revision"] = current.revision if current else None

    last_good = store.get_kv(KV_LAST_GOOD)
    rows = compute(config, fetch, today)
    generation = (last_good or {}).get("generation", 0)
    new_state: SpecState | None = None
    if fetch.registry is None:
        summary["note"] = "no registry yet: nothing to compare"
    elif last_good is None:
        summary["baseline"] = True
        summary["note"] = f"baseline taken: {len(rows)} rows, no notices for rows already listed"
        new_state = _state(fetch, rows, {}, generation + 1, last_good)
    else:
        # Keys carry the generation these changes create, so a crash before the save below repeats them exactly.
        registry_changes, kept = _registry_changes(last_good, rows, generation + 1)
        changes += registry_changes
        new_state = _state(fetch, rows, kept, generation + (1 if registry_changes else 0), last_good)

    enqueued += _unresolved_alerts(store, config, rows)
    for change in changes:
        enqueued += _announce(store, config, change)
    if new_state is not None:
        store.set_kv(KV_LAST_GOOD, new_state)
    if fetch.releases_error is None:
        store.set_kv(KV_REVISIONS, [r.to_json() for r in fetch.revisions])

    summary["changes"] = [c.to_json() for c in changes]
    summary["notices"] = enqueued
    summary["rows"] = len(rows)
    summary["unresolved"] = [r["feature"] for r in rows if not r["resolved"]]
    if summary["unresolved"]:
        log.warning("spec registry rows with no earliest-removal date: %s", summary["unresolved"])
    return summary


# --- diffing --------------------------------------------------------------------------------------------


def _state(
    fetch: SpecFetch,
    rows: list[DeprecationRow],
    kept: dict[str, DeprecationRow],
    generation: int,
    last_good: SpecState | None,
) -> SpecState:
    assert fetch.registry is not None
    computed = {r["key"]: r for r in rows}
    computed.update(kept)
    saved = last_good.get("saved") if (last_good and fetch.registry_from_state) else iso(utcnow())
    return SpecState(registry=fetch.registry.to_json(), computed=computed, generation=generation, saved=saved)


def _registry_changes(
    last_good: SpecState, rows: list[DeprecationRow], generation: int
) -> tuple[list[Change], dict[str, DeprecationRow]]:
    """Changes between the stored rows and the new ones, and the stored rows to keep in place of new
    unresolved ones whose text did not change (a lookup that failed once must not look like a change)."""
    before: dict[str, DeprecationRow] = last_good.get("computed", {})
    old_state = {key: row["state"] for key, row in before.items()}
    kept: dict[str, DeprecationRow] = {}
    changes: list[Change] = []

    def change(kind: str, subject: str, old: DeprecationRow | None, new: DeprecationRow | None, key: str) -> None:
        changes.append(Change(kind, subject, old, new, keys.spec_registry_change(generation, kind, key)))

    new_keys = {r["key"] for r in rows}
    for row in rows:
        key, old = row["key"], before.get(row["key"])
        if old is None or (row["state"] == "deprecated" and old_state[key] == "removed"):
            change(
                "new-deprecation" if row["state"] == "deprecated" else "moved-to-removed", row["feature"], old, row, key
            )
        elif row["state"] == "removed" and old_state[key] == "deprecated":
            change("moved-to-removed", row["feature"], old, row, key)
        elif row["state"] == "deprecated":
            same_text = " ".join(old["earliest_removal_text"].split()) == " ".join(row["earliest_removal_text"].split())
            if same_text and not row["resolved"] and old["resolved"]:
                kept[key] = old
            elif not same_text or old["earliest_removal"] != row["earliest_removal"]:
                change("earliest-removal-changed", row["feature"], old, row, key)
    for key, old in before.items():
        if key not in new_keys and old["state"] == "deprecated":
            change("deprecation-gone", old["feature"], old, None, key)
    return changes, kept


def _revision_changes(before: list[SpecRevision], after: list[SpecRevision]) -> list[Change]:
    changes = []
    current = current_revision(before)
    for revision in new_revisions(before, after):
        kind = "new-rc" if revision.prerelease else "new-revision"
        old = current.to_json() if current else None
        changes.append(
            Change(kind, revision.tag, old, revision.to_json(), keys.spec_release_change(kind, revision.tag))
        )
    return changes


# --- notices --------------------------------------------------------------------------------------------


def _announce(store: Store, config: WatcherConfig, change: Change) -> int:
    store.add_event(change.key, f"spec-{change.kind}", change.to_json())
    text, blocks = render_change(change, config.spec.registry_url)
    enqueued = 0
    for team in config.teams:
        if team.spec_news:
            notice = Notice(
                keys.for_team(change.key, team.name), team.name, team.slack_channel, f"spec-{change.kind}", text, blocks
            )
            enqueued += store.enqueue(notice)
    return enqueued


def operator_targets(config: WatcherConfig) -> list[tuple[str, str]]:
    """(team field, channel) pairs for operator alerts."""
    if config.slack.operators_channel:
        return [(OPERATORS, config.slack.operators_channel)]
    seen: dict[str, str] = {}
    for team in config.teams:
        seen.setdefault(team.slack_channel, team.name)
    return [(team, channel) for channel, team in seen.items()]


def _alert(
    store: Store,
    config: WatcherConfig,
    key: str,
    kind: str,
    payload: dict[str, Any],
    title: str,
    body: str,
    detail: str,
) -> int:
    store.add_event(key, kind, payload)
    text, blocks = render_operator(title, body, detail)
    return sum(
        store.enqueue(Notice(keys.for_channel(key, channel), team, channel, kind, text, blocks))
        for team, channel in operator_targets(config)
    )


def _source_health(store: Store, config: WatcherConfig, source: str, error: str | None) -> int:
    alerts = store.get_kv(KV_ALERTS) or {}
    state = alerts.get(source) or {"error": None, "episode": 0}
    if error is None and state["error"] is None:
        return 0
    if error is None:
        key = keys.spec_source_recovered(source, state["episode"])
        enqueued = _alert(
            store,
            config,
            key,
            f"spec-{source}-recovered",
            {"source": source, "was": state["error"]},
            f"Spec {source}: readable again",
            f"The spec {source} can be read again.",
            f"It failed with: {state['error']}",
        )
        alerts[source] = {"error": None, "episode": state["episode"]}
        store.set_kv(KV_ALERTS, alerts)
        return enqueued
    if state["error"] is None:
        state = {"error": error, "episode": state["episode"] + 1}
    state["error"] = error
    alerts[source] = state
    store.set_kv(KV_ALERTS, alerts)
    key = keys.spec_source_unreadable(source, state["episode"], error)
    return _alert(
        store,
        config,
        key,
        f"spec-{source}-unreadable",
        {"source": source, "error": error},
        f"Spec {source}: cannot be read",
        error,
        "The last good copy stays in use; this alert is not repeated for the same error.",
    )


_UNRESOLVED_HELP = {
    "impossible-date": "Not guessed: the registry page has a date that does not exist. The row stays unresolved "
    "until the page is corrected.",
    "*": "Not guessed. Teach watcher/spec/removal.py this shape, or set spec.sep_final if a SEP date is missing.",
}


def _unresolved_alerts(store: Store, config: WatcherConfig, rows: list[DeprecationRow]) -> int:
    enqueued = 0
    for row in rows:
        if row["resolved"]:
            continue
        key = keys.spec_unresolved(row["key"], row["earliest_removal_text"], row["basis"])
        enqueued += _alert(
            store,
            config,
            key,
            "spec-unresolved",
            {"feature": row["feature"], "basis": row["basis"]},
            "Spec registry: earliest removal not computed",
            f"{row['feature']}: “{row['earliest_removal_text']}” — {row['basis']}",
            _UNRESOLVED_HELP.get(row["shape"], _UNRESOLVED_HELP["*"]),
        )
    return enqueued
