"""The cluster's messages: the one threaded reply to each team of a cluster that crossed the threshold, the line
later results carry in their own notice, and the operators' notice with the draft upstream report. Everything
from outside (signatures, note lines, server names) is escaped by the one Slack layer (`notify.blocks`)."""

from __future__ import annotations

from watcher.clusters.release_notes import NotesFinding
from watcher.clusters.upstream import UpstreamDraft
from watcher.config import LoadedConfig
from watcher.core.run_report import RunReport
from watcher.core.store_clusters import ClusterRow
from watcher.core.store_schema import Notice
from watcher.notify import keys
from watcher.notify.blocks import MAX_SECTION_CHARS, Mrkdwn, clip, context, escape, header, link, section
from watcher.spec.watch import operator_targets

RELEASES_HOME = "https://github.com/"
"""A note's address (from the answer of GitHub's API) is a link only there; any other is shown as its version."""


def cluster_link(loaded: LoadedConfig, cluster: ClusterRow) -> Mrkdwn:
    """A link to the cluster view on the status page when its public address is configured, else the words."""
    base = loaded.config.http.public_url
    if base:
        return link(f"{base.rstrip('/')}/clusters#{cluster['signature']}", "see the cluster")
    return Mrkdwn("see the cluster `{}` on the status page").format(str(cluster["signature"]))


def _count(servers: int, teams: int) -> str:
    return f"{servers} server{'s' if servers != 1 else ''} of {teams} team{'s' if teams != 1 else ''}"


def notes_markdown(notes: NotesFinding) -> Mrkdwn:
    """The notes' verdict, each matching line quoted with a link to its release."""
    lines = [escape(notes.sentence())]
    for note in notes.lines[:3]:
        linked = note.url and note.url.startswith(RELEASES_HOME)
        where = link(note.url, f"{note.version} release notes") if note.url and linked else escape(note.version)
        lines.append(Mrkdwn("> {} ({})").format(note.text, where))
    return Mrkdwn("\n").join(lines)


def result_line(report: RunReport) -> tuple[Mrkdwn, Mrkdwn] | None:
    """(mrkdwn, plain) for a result's own notice when its cluster spans the threshold's teams; None otherwise."""
    cluster = report.get("cluster")
    if not isinstance(cluster, dict) or not cluster.get("likely_sdk"):
        return None
    count = _count(int(cluster["servers"]), int(cluster["teams"]))
    plain = f"The same failure on {count} — likely the SDK (signature {cluster['signature']})."
    notes = cluster.get("notes") or {}
    if notes.get("sentence"):
        plain += f" {notes['sentence']}"
    return escape(plain), escape(plain)


def team_reply(loaded: LoadedConfig, cluster: ClusterRow, team: str, notes: NotesFinding) -> Notice:
    """The one reply to `team` in the thread of the version's alert: the failure is shared, likely the SDK."""
    config = loaded.config
    count = _count(len(cluster["servers"]), len(cluster["teams"]))
    version = cluster["version"]
    title = f"The same failure on {count} on {cluster['sdk']} {version} — likely the SDK"
    body = Mrkdwn("*{}*; {}.\n`{}`").format(title, cluster_link(loaded, cluster), cluster["summary"])
    blocks = [section(body), section(notes_markdown(notes))]
    text = clip(f"{title}. {cluster['summary']}. {notes.sentence()}", MAX_SECTION_CHARS)
    return Notice(
        key=keys.cluster_reply(cluster["sdk"], version, cluster["signature"], team),
        team=team,
        channel=config.team(team).slack_channel,
        kind="cluster",
        text=escape(text),
        blocks=blocks,
        thread_of=keys.release_alert(cluster["sdk"], version, team),
    )


def operator_notices(loaded: LoadedConfig, cluster: ClusterRow, upstream: UpstreamDraft) -> list[Notice]:
    """One notice per operator channel: the cluster and the draft issue text for the SDK's repository."""
    title = f"New failure cluster: {cluster['sdk']} {cluster['version']}"
    servers = ", ".join(cluster["servers"][:20])
    summary = f"{_count(len(cluster['servers']), len(cluster['teams']))}: {cluster['summary']} ({upstream.verdict})"
    blocks = [
        header(title),
        section(escape(summary)),
        section(Mrkdwn("*Draft upstream issue:* {}\n```{}```").format(upstream.title, clip(upstream.body, 2500))),
        context(escape(f"servers: {servers}")),
    ]
    text = clip(escape(f"{title}: {summary}\n{upstream.title}\n{upstream.body}"), MAX_SECTION_CHARS)
    return [
        Notice(
            key=keys.cluster_upstream(cluster["sdk"], cluster["version"], cluster["signature"], channel),
            team=team,
            channel=channel,
            kind="cluster_upstream",
            text=text,
            blocks=blocks,
        )
        for team, channel in operator_targets(loaded.config)
    ]
