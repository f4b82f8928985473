"""One poll of every SDK source: fetch concurrently, record versions, turn new ones into events and notices."""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

from watcher.config import LoadedConfig, WatcherConfig
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.core.timefmt import iso, utcnow
from watcher.decisions.buttons import alert_buttons, with_actions
from watcher.decisions.records import muted_until
from watcher.notify import keys
from watcher.notify.settings import Team
from watcher.polling.alerts import check_sources
from watcher.sources import ADAPTERS
from watcher.sources.base import RegistryHttp, Release, SourceError
from watcher.sources.events import ReleaseEvent
from watcher.sources.notices import release_notice
from watcher.sources.settings import SdkSource
from watcher.sources.versions import is_ignored, run_refusal, sort_key

log = logging.getLogger(__name__)


@dataclass
class SourceOutcome:
    sdk: str
    ok: bool
    error: str | None = None
    baseline: bool = False
    new: list[ReleaseEvent] = field(default_factory=list)
    requests: int = 0
    bytes: int = 0
    not_modified: int = 0
    newest: str | None = None
    """The newest version listed (pre-releases included, yanked ones not): where a baseline run starts."""


@dataclass
class PollResult:
    outcomes: list[SourceOutcome]

    @property
    def baseline(self) -> bool:
        return any(o.baseline for o in self.outcomes)

    @property
    def new(self) -> list[ReleaseEvent]:
        return [release for o in self.outcomes for release in o.new]

    @property
    def baseline_newest(self) -> dict[str, str]:
        """SDKs baselined by this poll → their newest version."""
        return {o.sdk: o.newest for o in self.outcomes if o.baseline and o.newest}

    @property
    def failed(self) -> list[dict[str, str]]:
        return [{"sdk": o.sdk, "error": o.error or "unknown error"} for o in self.outcomes if not o.ok]

    def as_json(self) -> dict[str, Any]:
        public = ("sdk", "registry", "package", "version", "prerelease", "published", "first_seen")
        return {
            "baseline": self.baseline,
            "baselined": [o.sdk for o in self.outcomes if o.baseline],
            "new": [{k: getattr(r, k) for k in public} for r in self.new],
            "failed": self.failed,
        }


@dataclass
class SourceFetch:
    """One source's answer: its releases, or the reason there are none."""

    sdk: SdkSource
    started: datetime
    releases: list[Release] | None
    error: str | None
    http: RegistryHttp


async def fetch_source(
    client: httpx.AsyncClient,
    store: Store,
    config: WatcherConfig,
    sdk: SdkSource,
    stop: threading.Event | None = None,
) -> SourceFetch:
    started = utcnow()
    http = RegistryHttp(client=client, cache=store, settings=config.http_client, stop=stop)
    adapter = ADAPTERS[sdk.registry]
    deadline = config.http_client.poll_deadline_seconds
    try:
        releases = await asyncio.wait_for(adapter(http, sdk), timeout=deadline)
    except TimeoutError:
        error = f"{sdk.registry}: poll of {sdk.package} did not finish within {deadline:g} s (poll deadline)"
        return SourceFetch(sdk, started, None, error, http)
    except SourceError as exc:
        return SourceFetch(sdk, started, None, str(exc), http)
    except (ValueError, KeyError, TypeError) as exc:  # a response shape the adapter did not expect
        error = f"{sdk.registry} answered something unreadable: {type(exc).__name__}: {exc}"
        return SourceFetch(sdk, started, None, error, http)
    return SourceFetch(sdk, started, releases, None, http)


async def poll_all(
    loaded: LoadedConfig, store: Store, client: httpx.AsyncClient | None = None, stop: threading.Event | None = None
) -> PollResult:
    config = loaded.config
    own_client = client is None
    if client is None:
        client = httpx.AsyncClient(
            headers={"User-Agent": config.http_client.user_agent},
            follow_redirects=True,
            limits=httpx.Limits(max_connections=config.http_client.concurrency),
        )
    limit = asyncio.Semaphore(config.http_client.concurrency)

    async def one(sdk: SdkSource) -> SourceFetch:
        async with limit:
            return await fetch_source(client, store, config, sdk, stop)

    try:
        fetched = await asyncio.gather(*(one(sdk) for sdk in config.sdks))
    finally:
        if own_client:
            await client.aclose()
    outcomes = [record(store, config, f.sdk, f.started, f.releases, f.error, f.http) for f in fetched]
    check_sources(store, config)  # a source failing for schedule.source_alert_minutes → one operator notice
    return PollResult(outcomes)


def record(
    store: Store,
    config: WatcherConfig,
    sdk: SdkSource,
    started: datetime,
    releases: list[Release] | None,
    error: str | None,
    http: RegistryHttp,
) -> SourceOutcome:
    """Store one source's result; new versions become events and one notice per interested team."""
    outcome = SourceOutcome(
        sdk=sdk.name,
        ok=error is None,
        error=error,
        requests=http.stats.requests,
        bytes=http.stats.bytes,
        not_modified=http.stats.not_modified,
    )
    finished = utcnow()
    now = iso(finished)
    if releases is not None:
        releases = [r for r in releases if not is_ignored(sdk.registry, r.version)]
        if not releases:
            outcome.ok, outcome.error = False, f"{sdk.registry} listed no versions of {sdk.package}"
        listed = [r.version for r in releases if not r.yanked]
        outcome.newest = max(listed, key=lambda v: sort_key(sdk.registry, v)) if listed else None
    with store.transaction():
        if outcome.ok and releases is not None:
            known = store.known_versions(sdk.name, sdk.package)
            outcome.baseline = not store.has_versions(sdk.name)
            listed_now = {r.version for r in releases}
            for gone in known - listed_now:  # removed from the registry: never "newest" in status again
                store.set_yanked(sdk.name, sdk.package, gone, True)
            for release in releases:
                if release.version in known:
                    store.set_yanked(sdk.name, sdk.package, release.version, release.yanked)
                    continue
                event = ReleaseEvent.found(sdk, release, now)
                store.add_version(event.version_row(baseline=outcome.baseline))
                if outcome.baseline or release.yanked:
                    continue  # history is not news; a version already withdrawn is noise
                if store.add_event(keys.release_event(sdk.name, release.version), "release", event.payload()):
                    outcome.new.append(event)
                    _notify_teams(store, config, event)
        store.record_poll(
            sdk.name,
            "sdk",
            started,
            outcome.ok,
            outcome.error,
            finished=finished,
            requests=outcome.requests,
            bytes=outcome.bytes,
            not_modified=outcome.not_modified,
            new=len(outcome.new),
        )
    if outcome.baseline:
        log.info(
            "baseline taken for %s: %d versions recorded, no alerts for history",
            sdk.name,
            len(releases or []),
            extra={"source": sdk.name},
        )
    elif not outcome.ok:
        log.warning("poll of %s failed: %s (last good data kept)", sdk.name, outcome.error, extra={"source": sdk.name})
    return outcome


def interested(team: Team, config: WatcherConfig, release: ReleaseEvent) -> bool:
    on_sdk = release.sdk in team.sdks or any(
        s.sdk == release.sdk for s in config.servers if s.team == team.name or s.name in team.servers
    )
    if not on_sdk:
        return False
    if not release.prerelease and not team.notify_stable:
        return False
    version = release.version
    if team.include and not any(fnmatch.fnmatchcase(version, pattern) for pattern in team.include):
        return False
    return not any(fnmatch.fnmatchcase(version, pattern) for pattern in team.exclude)


def servers_to_run(config: WatcherConfig, team: str, release: ReleaseEvent) -> list[str]:
    if not release.prerelease and not config.suites.on_stable:
        return []
    if run_refusal(release.registry, release.version):
        return []  # recorded and announced, never run (the notice says why)
    return [s.name for s in config.servers if s.team == team and s.sdk == release.sdk]


def _notify_teams(store: Store, config: WatcherConfig, release: ReleaseEvent) -> None:
    for team in config.teams:
        if not interested(team, config, release):
            continue
        if release.prerelease and muted_until(store, team.name, release.sdk, utcnow()):
            log.info("%s %s: muted for team %s from Slack", release.sdk, release.version, team.name)
            continue
        servers = servers_to_run(config, team.name, release)
        text, blocks = release_notice(release, servers)
        buttons = alert_buttons(config, team.name, release.sdk, release.version, release.prerelease, servers)
        blocks = with_actions(blocks, buttons)
        store.enqueue(
            Notice(
                key=keys.release_alert(release.sdk, release.version, team.name),
                team=team.name,
                channel=team.slack_channel,
                kind="release",
                text=text,
                blocks=blocks,
            )
        )
