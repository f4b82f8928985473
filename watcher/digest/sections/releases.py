"""Section 3, the team's SDKs this week: each release first seen in the period, with each of the team's
servers' suite verdict on it (or "pending") and links to its alert and result threads in Slack."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from datetime import datetime

from watcher.config import WatcherConfig
from watcher.core.store import Store
from watcher.core.timefmt import parse_iso
from watcher.digest.model import ReleaseItem, ThreadRef, Verdict
from watcher.notify import keys
from watcher.notify.settings import Team
from watcher.sources.events import ReleaseEvent
from watcher.sources.notices import release_page
from watcher.suites.settings import Server


def team_sdks(config: WatcherConfig, team: Team) -> list[str]:
    names = list(team.sdks)
    for server in config.servers_of_team(team.name):
        if server.sdk not in names:
            names.append(server.sdk)
    return names


def _wanted(team: Team, version: str) -> bool:
    if team.include and not any(fnmatch.fnmatchcase(version, p) for p in team.include):
        return False
    return not any(fnmatch.fnmatchcase(version, p) for p in team.exclude)


def slack_thread_url(channel: str, ts: str) -> str:
    """A link to a Slack message that Slack resolves to the signed-in workspace."""
    return f"https://slack.com/archives/{channel}/p{ts.replace('.', '')}"


def thread_ref(store: Store, key: str) -> ThreadRef | None:
    row = store.outbox_row(key)
    if row is None:
        return None
    url = slack_thread_url(row["slack_channel"], row["slack_ts"]) if row["slack_channel"] and row["slack_ts"] else None
    return ThreadRef(key, row["status"], row["slack_channel"], row["slack_ts"], url)


def releases_of_period(
    config: WatcherConfig, store: Store, team: Team, sdks: Sequence[str], since: datetime, until: datetime
) -> list[ReleaseItem]:
    items = []
    for event in store.events(kind="release", since=since):
        release = ReleaseEvent.stored(event["key"], event["payload"])
        created = parse_iso(event["created"])
        if release.sdk not in sdks or (created is not None and created >= until):
            continue
        if release.yanked or not _wanted(team, release.version):
            continue
        sdk, version, prerelease = release.sdk, release.version, release.prerelease
        thread = thread_ref(store, keys.release_alert(sdk, version, team.name))
        servers = [s for s in config.servers_of_team(team.name) if s.sdk == sdk]
        verdicts = [_verdict(config, store, s, version, prerelease, team) for s in servers]
        items.append(
            ReleaseItem(
                sdk=sdk,
                registry=release.registry,
                package=release.package,
                version=version,
                prerelease=prerelease,
                first_seen=release.first_seen,
                published=release.published,
                page=release_page(release.registry, release.package, version),
                verdicts=verdicts,
                thread=thread,
            )
        )
    return items


def _verdict(
    config: WatcherConfig, store: Store, server: Server, version: str, prerelease: bool, team: Team
) -> Verdict:
    runs = [
        r for r in store.runs(server=server.name, limit=1000) if r["sdk_version"] == version and r["sdk"] == server.sdk
    ]
    thread = thread_ref(store, keys.suite_result(server.name, version, team.name))
    if not runs:
        if not prerelease and not config.suites.on_stable:
            return Verdict(server.name, "not-run", "stable releases are not tested (suites.on_stable is off)")
        return Verdict(server.name, "pending", "not queued yet")
    run = runs[0]
    if run["status"] != "done":
        return Verdict(server.name, "pending", f"suite run #{run['id']} {run['status']}", run["id"], thread)
    report = run["report"] or {}
    reasons = [str(r.get("reason", "")) for r in report.get("reasons") or [] if isinstance(r, dict)]
    detail = "; ".join(reasons[:3]) + (f" (+{len(reasons) - 3} more)" if len(reasons) > 3 else "")
    return Verdict(server.name, str(run["verdict"] or "error"), detail, run["id"], thread)
