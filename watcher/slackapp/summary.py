"""What Slack did, for `status`, the run page and `/mcp-watcher status|accepted`: recent actions, mutes in
force and accepts (Slack's, and the accept file's where the watcher can read it)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from watcher.config import LoadedConfig
from watcher.contract.accept import AcceptError, load_accept_file
from watcher.core.contract_doc import AcceptEntryRecord
from watcher.core.store import Store
from watcher.core.text import Mrkdwn
from watcher.decisions import records
from watcher.suites.settings import Server

RECENT = 10


def slack_status(store: Store, moment: dt.datetime, server: str | None = None) -> dict[str, Any]:
    """The `slack` section of `status`: the newest actions, the mutes in force, the Slack accepts."""
    return {
        "actions": [a.line() for a in records.actions(store, server=server, limit=RECENT)],
        "mutes": [
            {"team": m.team, "sdk": m.sdk, "package": m.package, "until": m.until.isoformat(), "by": m.user_name}
            for m in records.mutes(store, moment)
        ],
        "accepts": [
            {"server": a.server, **a.entry, "made": a.created, "by_user": a.user_name}
            for a in records.accepts(store, server)
        ],
    }


def status_lines(section: dict[str, Any]) -> list[str]:
    """The SLACK part of `mcp-watcher status`."""
    lines = ["", "SLACK ACTIONS"]
    lines += [f"  {line}" for line in section["actions"]] or ["  none"]
    for mute in section["mutes"]:
        lines.append(f"  muted: {mute['package']} pre-releases for {mute['team']} until {mute['until']} ({mute['by']})")
    for accept in section["accepts"]:
        lines.append(f"  accepted in Slack: {accept_line(accept)}")
    return lines


def accept_line(entry: Mapping[str, object]) -> str:
    path = f" {entry['path']}" if entry.get("path") else ""
    server = f"{entry['server']}: " if entry.get("server") else ""
    return f"{server}{entry['rule']} {entry['list']}/{entry['name']}{path} until {entry['expires']} — {entry['reason']}"


def _identity(entry: Mapping[str, object]) -> tuple[object, ...]:
    return tuple(entry.get(k) for k in ("rule", "list", "name", "path"))


def file_accepts(loaded: LoadedConfig, server: Server) -> tuple[list[AcceptEntryRecord], str | None]:
    """The server's accept file entries when its code is a local folder; else (nothing, why not)."""
    if not server.accept:
        return [], None
    if server.path is None:
        return [], f"the accept file {server.accept} is in the server's repository"
    try:
        accept = load_accept_file(loaded.resolve(server.accept))
    except AcceptError as exc:
        return [], str(exc)
    return [e.as_record() for e in accept.entries], None


def accepted_text(loaded: LoadedConfig, store: Store, today: dt.date, server: str | None = None) -> Mrkdwn:
    """`/mcp-watcher accepted [server]`: what is accepted, where, and until when (expired ones said so)."""
    servers = [s for s in loaded.config.servers if server is None or s.name == server]
    if not servers:
        return Mrkdwn("No server named {}.").format(repr(server))
    lines: list[Mrkdwn] = []
    for item in servers:
        entries, note = file_accepts(loaded, item)
        rows = [("file", e) for e in entries] + [("Slack", a.entry) for a in records.accepts(store, item.name)]
        lines.append(Mrkdwn("*{}*{}").format(item.name, "" if rows else ": nothing accepted"))
        named = {_identity(e) for e in entries}
        for source, entry in rows:
            expired = " (expired: reported again)" if str(entry["expires"]) < today.isoformat() else ""
            shadowed = (
                " (the file names the same change: the file's entry wins)"
                if (source == "Slack" and _identity(entry) in named)
                else ""
            )
            by = f" by {entry['by']}" if entry.get("by") else ""
            lines.append(Mrkdwn("• [{}] {}{}{}{}").format(source, accept_line(entry), by, expired, shadowed))
        if note:
            lines.append(Mrkdwn("  _{}_").format(note))
    return Mrkdwn("\n").join(lines)


def run_section(store: Store, run_id: int) -> dict[str, Any] | None:
    """The run page's "From Slack" part: what was done there about this server and version, which of the
    run's accepted changes were accepted in Slack, and Slack accepts the accept file overrode."""
    run = store.run_by_id(run_id)
    if run is None:
        return None
    report = run["report"] if isinstance(run["report"], dict) else {}
    contract = report.get("contract") if isinstance(report.get("contract"), dict) else {}
    acceptance = (contract or {}).get("acceptance") or {}
    slack = acceptance.get("slack") or {}
    accepted = [
        f"{c.get('list')}/{c.get('name')} ({c.get('rule')}) until {c['accepted'].get('expires')} by "
        f"{c['accepted'].get('by')}: {c['accepted'].get('reason')}"
        for c in (contract or {}).get("accepted") or []
        if isinstance(c.get("accepted"), dict) and "in Slack" in str(c["accepted"].get("by") or "")
    ]
    shadowed = [
        f"{s['label']} (by {s['by']}, until {s['expires']}): the accept file names the same change, and the file wins"
        for s in slack.get("shadowed") or []
    ]
    actions = [a.line() for a in records.actions(store, server=run["server"], version=run["sdk_version"])]
    if not (actions or accepted or shadowed):
        return None
    return {"actions": actions, "accepted": accepted, "shadowed": shadowed}
