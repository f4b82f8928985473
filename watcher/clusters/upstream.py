"""The draft issue text for the SDK's repository that the operators get once per new cluster: the versions,
the normalised trace, the smallest failing reproduction the watcher has, how many servers — or, when the
SDK's notes announce the change, that no report is needed ("announced in 2.0.0a1's notes, migrate")."""

from __future__ import annotations

from dataclasses import dataclass

from watcher.clusters.release_notes import NotesFinding
from watcher.core.store_clusters import ClusterRow


@dataclass(frozen=True)
class UpstreamDraft:
    title: str
    body: str
    """Markdown for the SDK's issue tracker (plain text: the notice escapes it)."""
    announced: bool
    verdict: str
    """One line: file it, or migrate."""


def draft(cluster: ClusterRow, registry: str, package: str, baseline: str | None, notes: NotesFinding) -> UpstreamDraft:
    version, servers, teams = cluster["version"], len(cluster["servers"]), len(cluster["teams"])
    announced = bool(notes.lines)
    if announced:
        first = notes.lines[0]
        verdict = f"announced in {first.version}'s notes, migrate: no upstream report needed"
    else:
        verdict = "not announced in the release notes: worth reporting upstream"
    title = f"{package} {version}: {cluster['summary']}"
    lines = [
        f"**{package} {version}** (worked on {baseline or 'the previous version'}) fails the same way on "
        f"{servers} server{'s' if servers != 1 else ''} of {teams} team{'s' if teams != 1 else ''}.",
        "",
        "**Normalised trace**",
        "```",
        cluster["trace"] or cluster["summary"],
        "```",
        "",
        "**Smallest reproduction**",
        "```",
        *_reproduction(cluster, registry, package),
        "```",
        "",
        f"**Release notes**: {notes.sentence()}",
    ]
    lines += [f"> {n.text} ({n.url or n.version})" for n in notes.lines[:5]]
    lines += ["", f"Signature `{cluster['signature']}` ({cluster['rule']}), first seen {cluster['first_seen']}."]
    return UpstreamDraft(title, "\n".join(lines), announced, verdict)


def _reproduction(cluster: ClusterRow, registry: str, package: str) -> list[str]:
    version, reproduction = cluster["version"], cluster["reproduction"]
    if registry != "pypi":
        return [f"# {package} {version}", reproduction]
    if cluster["rule"] == "import_failure":
        return [f"pip install '{package}=={version}'", f"python -c {reproduction!r}"]
    return [f"pip install '{package}=={version}'", f"# then: {reproduction}"]
