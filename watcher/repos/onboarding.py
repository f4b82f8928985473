"""The one onboarding message of a team repository: the first time its file is read, each server runs
once on its baseline SDK version (taking its contract baseline); when every such run is done, its team
gets one message with what was found, the baseline, the first verdicts and how to change it."""

from __future__ import annotations

from typing import Any

from watcher.config import LoadedConfig
from watcher.core.run_report import RunReport
from watcher.core.store import Store
from watcher.core.store_schema import Notice, RunRow
from watcher.notify import keys
from watcher.notify.blocks import Mrkdwn, escape, section
from watcher.repos.detect import DetectionEntry
from watcher.repos.sync import RepoState, StoredServer
from watcher.repos.teamfile import FILE_NAME
from watcher.suites.source.checkout import display_url

DOC = "docs/configuration.md#team-repositories-repos-and-the-team-file"


def start_onboarding(store: Store, new: list[RepoState]) -> list[str]:
    """Queue the first run of each server of each newly seen repository; returns "server@version"."""
    queued = []
    for state in new:
        trigger = keys.onboarding_trigger(state.git)
        state.onboarding_runs = []
        for server in state.servers:
            run = f"{server['name']}@{server['baseline_sdk_version']}"
            store.queue_run(server["name"], server["sdk"], server["baseline_sdk_version"], trigger)
            state.onboarding_runs.append(run)
            queued.append(run)
        state.save(store)
    return queued


def send_due_onboarding(loaded: LoadedConfig, store: Store, states: list[RepoState]) -> list[str]:
    """The onboarding message of each repository whose first runs are all done; returns the keys queued."""
    sent = []
    for state in states:
        if state.onboarded or not state.onboarding_runs:
            continue
        verdicts: dict[str, RunRow] = {}
        for run in state.onboarding_runs:
            name, version = run.rsplit("@", 1)
            done = [r for r in store.runs(status="done", server=name, limit=20) if r["sdk_version"] == version]
            if not done:
                break
            verdicts[name] = done[0]
        else:
            team = loaded.config.team(state.team)
            text, blocks = onboarding_text(state, verdicts)
            key = keys.repo_onboarding(state.git, team.name)
            if store.enqueue(Notice(key, team.name, team.slack_channel, "repo-onboarding", text, blocks)):
                sent.append(key)
            state.onboarded = True
            state.save(store)
    return sent


def onboarding_text(state: RepoState, verdicts: dict[str, RunRow]) -> tuple[Mrkdwn, list[dict[str, Any]]]:
    """The message's text and blocks: everything in it but our own words comes from the team's file, its
    repository or its runs, so it is all composed escaped."""
    repo = display_url(state.git)
    first = {run.rsplit("@", 1)[0] for run in state.onboarding_runs} or {s["name"] for s in state.servers}
    head = f"mcp-watcher now watches {repo} ({state.ref} @ {(state.commit or '?')[:12]}), from its {FILE_NAME}"
    lines = [
        server_line(
            server,
            state.detections.get(server["name"]),
            state.overridden.get(server["name"]) or [],
            verdicts.get(server["name"]),
        )
        for server in state.servers
        if server["name"] in first  # a server added to the file since has its own message (serverset.welcome)
    ]
    change = (
        f"To change it, edit {FILE_NAME} in the repository (every key: {DOC}); "
        "each new beta of the SDK reruns these servers and replies in its thread here."
    )
    text = Mrkdwn("\n").join([head, *lines, change])
    blocks = [section(Mrkdwn("*{}*").format(head)), section(escape("\n".join(lines))), section(escape(change))]
    return text, blocks


def server_line(server: StoredServer, found: DetectionEntry | None, overridden: list[str], run: RunRow | None) -> str:
    """One server of an onboarding message: what it is, where that was read, its baseline and first verdict."""
    how = f"detected in {found['manifest']}" if found else "as written in the file"
    if found and overridden:
        how += f"; set in the file: {', '.join(overridden)}"
    if found and found.get("specifier") and found.get("resolved"):
        how += f"; {found['specifier']} resolved to {server['baseline_sdk_version']} ({found['resolved']})"
    report: RunReport = (run.get("report") if run else None) or {}
    reasons = [r.get("reason", "") for r in report.get("reasons", [])]
    verdict = str((run.get("verdict") if run else None) or "not run")
    contract = report.get("contract") or {}
    baseline = (
        f"contract baseline taken on {server['baseline_sdk_version']}"
        if contract.get("baseline_snapshot")
        else "no contract baseline yet (the first run stopped before it)"
    )
    return (
        f"• {server['name']}: {server['language']}"
        + (f" ({found['language']})" if found and found["language"] != server["language"] else "")
        + f", SDK {server.get('sdk_package') or server['sdk']} {server['baseline_sdk_version']} ({how}); "
        f"requirement sets {', '.join(server['requirements']) or 'none'}; "
        f"{baseline}; first run: {verdict}" + (f" — {reasons[0]}" if reasons and verdict != "pass" else "")
    )
