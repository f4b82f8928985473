"""Readiness notices: one thread per team and revision (first known, then each change), and the operators'
notice when a candidate suite version judges a server differently from the pinned one."""

from __future__ import annotations

from watcher.config import WatcherConfig
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.notify import keys
from watcher.notify.blocks import MAX_SECTION_CHARS, Mrkdwn, clip, context, escape, header, link, section
from watcher.readiness.judge import spec_link
from watcher.readiness.model import ReadinessEntry
from watcher.spec.watch import operator_targets


def describe(entry: ReadinessEntry) -> str:
    if entry["status"] == "ready":
        return "ready"
    if entry["status"] == "to_fix":
        return f"{len(entry['to_fix'])} to fix"
    return f"not yet testable ({entry.get('reason', '')})"


def team_readiness_notice(
    store: Store, config: WatcherConfig, team: str, revision: str, release: str, changed: dict[str, ReadinessEntry]
) -> bool:
    """One message in the team's readiness thread for `revision` about the servers whose readiness changed."""
    team_row = next((t for t in config.teams if t.name == team), None)
    if team_row is None:
        return False
    lines = []
    for server, entry in sorted(changed.items()):
        lines.append(
            Mrkdwn("*{}*: {} on {}, suite {}").format(
                server, describe(entry), entry.get("sdk_version") or "-", entry.get("suite_version") or "-"
            )
        )
        for item in entry.get("to_fix", [])[:10]:
            address = spec_link(item["spec"][0]) if item.get("spec") else None
            spec = Mrkdwn(" ({})").format(link(address, "spec")) if address else ""
            lines.append(Mrkdwn("  • {}: {}{}").format(item["scenario"], item["message"][:120], spec))
    title = f"Readiness for {revision} (projected release {release})"
    body = Mrkdwn("\n").join(lines)
    digest = keys.short_hash(
        repr(sorted((s, describe(e), [i["scenario"] for i in e.get("to_fix", [])]) for s, e in changed.items()))
    )
    parent = f"readiness:{revision}:{team}"
    first = store.outbox_row(parent) is None
    notice = Notice(
        key=parent if first else f"{parent}:{digest}",
        team=team,
        channel=team_row.slack_channel,
        kind="readiness",
        text=clip(Mrkdwn("{}\n{}").format(title, body), MAX_SECTION_CHARS),
        blocks=[header(title), section(clip(body, MAX_SECTION_CHARS))],
        thread_of=None if first else parent,
    )
    return store.enqueue(notice)


def candidate_notice(
    store: Store, config: WatcherConfig, server: str, pinned: str, candidate: str, differences: list[str]
) -> int:
    """Operators hear once per (server, candidate version, differences) that the candidate suite judges apart."""
    title = f"Suite {candidate} judges {server} differently from {pinned}"
    body = "\n".join(differences)
    detail = "A suite change or a server bug? Check before moving conformance.package."
    key = f"readiness:candidate:{candidate}:{server}:{keys.short_hash(body)}"
    text = Mrkdwn("{}: {}\n{}").format(title, body, detail)
    blocks = [header(title), section(escape(clip(body, MAX_SECTION_CHARS))), context(escape(detail))]
    return sum(
        store.enqueue(
            Notice(
                keys.for_channel(key, channel),
                team,
                channel,
                "readiness-candidate",
                clip(text, MAX_SECTION_CHARS),
                blocks,
            )
        )
        for team, channel in operator_targets(config)
    )
