"""The team repositories as `status` shows them: commit in use, servers, what was detected, the error."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict

from watcher.config import WatcherConfig
from watcher.core.store import Store
from watcher.repos.sync import repo_states
from watcher.suites.source.checkout import display_url


def repos_json(config: WatcherConfig, store: Store) -> list[dict[str, Any]]:
    return [
        {
            "git": display_url(state.git),
            "team": state.team,
            "ref": state.ref,
            "commit": state.commit,
            "has_file": state.has_file,
            "checked": state.checked,
            "servers": [
                {
                    "name": s["name"],
                    "language": s["language"],
                    "sdk": s["sdk"],
                    "sdk_package": s.get("sdk_package"),
                    "baseline_sdk_version": s["baseline_sdk_version"],
                    "detected": state.detections.get(s["name"]),
                    "overridden": state.overridden.get(s["name"], []),
                }
                for s in state.servers
            ],
            "error": state.error,
            "refused": state.refused,
            "proposed": bool(state.proposal) and not state.has_file,
        }
        for state in repo_states(config, store)
    ]


def discovery_json(config: WatcherConfig, store: Store) -> dict[str, Any] | None:
    from watcher.repos.discover import discovery_error

    github = config.discover.github
    return {"org": github.org, "topic": github.topic, "error": discovery_error(store)} if github else None


def repos_lines(repos: list[dict[str, Any]], discovery: dict[str, Any] | None = None) -> list[str]:
    if not repos and not discovery:
        return []
    lines = ["", "TEAM REPOSITORIES"]
    if discovery:
        topic = f" (topic {discovery['topic']})" if discovery["topic"] else ""
        state = f"could not be read: {discovery['error']}" if discovery["error"] else "read"
        lines.append(f"  discovery: GitHub organisation {discovery['org']}{topic} {state}")
    for repo in repos:
        where = f"@ {repo['commit'][:12]}" if repo["commit"] else "never read"
        lines.append(f"  {repo['git']} ({repo['team']}, {repo['ref']}) {where}")
        if repo["commit"] and not repo["has_file"] and not repo["error"]:
            proposed = "; a team file was proposed to its team (SERVER SET)" if repo.get("proposed") else ""
            lines.append(f"      no .mcp-watcher.yaml: no servers{proposed}")
        for server in repo["servers"]:
            found = server["detected"]
            seen = (
                f"detected {found['language']} {found['package']} {found['version'] or '(no version)'} "
                f"in {found['manifest']}"
                if found
                else "nothing detected"
            )
            if found and found.get("specifier"):
                seen += f" as {found['specifier']}; baseline {server['baseline_sdk_version']}"
                seen += f": {found['resolved']}" if found.get("resolved") else " (set in the file)"
            overridden = f"; set in the file: {', '.join(server['overridden'])}" if server["overridden"] else ""
            lines.append(
                f"      {server['name']}: {server['language']}, sdk {server['sdk']} "
                f"({server['sdk_package']} {server['baseline_sdk_version']}); {seen}{overridden}"
            )
        for name, why in (repo.get("refused") or {}).items():
            lines.append(f"      REFUSED {name} (the file's other servers are used): {why}")
        if repo["error"]:
            lines.append(f"      ERROR (last good servers stay): {repo['error']}")
    return lines


def page_banners(config: WatcherConfig, store: Store) -> list[str]:
    """One line per team repository whose file cannot be used, for the status page's banners."""
    lines = []
    for state in repo_states(config, store):
        for name, why in sorted(state.refused.items()):
            lines.append(f"Team {state.team}: {why.splitlines()[0]} — {name} from this repository is not watched.")
        if not state.error:
            continue
        kept = f"its servers from {state.commit[:12]} stay in use" if state.commit else "none of its servers is watched"
        lines.append(f"Team {state.team}: {state.error.splitlines()[0]} — {kept} until it is fixed.")
    return lines


class ProposalRow(TypedDict):
    """A repository without a team file and the file proposed to its team, as the page and `status` list it."""

    repository: str
    team: str
    commit: str
    found: str
    """What detection found, in words (`Proposal.summary`)."""
    file: str
    """The proposed team file's text."""


def proposals_json(config: WatcherConfig, store: Store) -> list[ProposalRow]:
    """The repositories without a team file and what was proposed to each (the page and `status`)."""
    shown: list[ProposalRow] = []
    for state in repo_states(config, store):
        if state.has_file or not state.proposal or not state.commit:
            continue
        proposal = state.proposal
        shown.append(
            {
                "repository": display_url(state.git),
                "team": state.team,
                "commit": state.commit,
                "found": proposal.summary(),
                "file": proposal.text,
            }
        )
    return shown
