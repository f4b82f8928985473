"""The clusters as the status page and `/api/status` show them: signature, servers, teams, first seen, the
example trace, and what the stored release notes say (nothing is fetched for a page)."""

from __future__ import annotations

from dataclasses import dataclass

from watcher.clusters.release_notes import NoteLine
from watcher.config import WatcherConfig
from watcher.core.run_report import RunReport
from watcher.core.store import Store

SHOWN = 50
"""The page and the API list the newest clusters, this many."""


@dataclass(frozen=True)
class ClusterView:
    sdk: str
    version: str
    signature: str
    rule: str
    summary: str
    servers: list[str]
    teams: list[str]
    first_seen: str
    crossed: str | None
    likely_sdk: bool
    trace: str
    reproduction: str
    notes: str
    """What the release notes say, one line ("Announced in …", "Nothing in the notes … matches", …)."""
    quotes: list[NoteLine]


def collect_clusters(config: WatcherConfig, store: Store, *, team: str | None = None) -> list[ClusterView]:
    """The newest clusters (with a team's only, when `team` is given), the likely-SDK ones first."""
    shown = []
    for row in store.clusters(limit=SHOWN if team is None else 1000):
        if team is not None and team not in row["teams"]:
            continue
        likely = row["crossed"] is not None  # it crossed the threshold with failing results (never errors)
        notes = row["notes"] or {}
        quotes = [NoteLine(str(q["version"]), str(q["text"]), q.get("url")) for q in notes.get("lines") or []]
        shown.append(
            ClusterView(
                sdk=row["sdk"],
                version=row["version"],
                signature=row["signature"],
                rule=row["rule"],
                summary=row["summary"],
                servers=row["servers"],
                teams=row["teams"],
                first_seen=row["first_seen"],
                crossed=row["crossed"],
                likely_sdk=likely,
                trace=row["trace"],
                reproduction=row["reproduction"],
                notes=str(notes.get("sentence") or ""),
                quotes=quotes,
            )
        )
        if len(shown) >= SHOWN:
            break
    return sorted(shown, key=lambda c: (not c.likely_sdk, -len(c.servers)))


@dataclass(frozen=True)
class RunCluster:
    """A run's cluster as its report recorded it when the run finished (the run page)."""

    signature: str
    rule: str
    summary: str
    servers: int
    teams: int
    likely_sdk: bool
    notes: str


def run_cluster(report: RunReport) -> RunCluster | None:
    cluster = report.get("cluster")
    if not isinstance(cluster, dict) or not cluster.get("signature"):
        return None
    notes = cluster.get("notes")
    return RunCluster(
        signature=str(cluster["signature"]),
        rule=str(cluster.get("rule") or ""),
        summary=str(cluster.get("summary") or ""),
        servers=int(cluster.get("servers") or 0),
        teams=int(cluster.get("teams") or 0),
        likely_sdk=bool(cluster.get("likely_sdk")),
        notes=str(notes.get("sentence") or "") if isinstance(notes, dict) else "",
    )
