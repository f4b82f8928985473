"""The state of failure clusters (watcher/clusters): which server's result on which SDK version has which
signature, each cluster's signature and when it first crossed the threshold, and the release notes fetched per
version. Its SQL lives here, beside `store.py`, which mixes `ClusterTables` into the `Store`."""

from __future__ import annotations

import json
import threading
from typing import Any, TypedDict

import sqlite_utils

from watcher.core.timefmt import iso, utcnow


class NewCluster(TypedDict):
    """A cluster as a failing result files it (`clusters/record`): its SDK version, its signature and the parts
    the signature shows."""

    sdk: str
    version: str
    signature: str
    rule: str
    summary: str
    parts: list[str]
    trace: str
    symbols: list[str]
    reproduction: str


def migrate_clusters(db: sqlite_utils.Database) -> None:
    """Migration 6: cluster members (one signature per server and version), clusters, release notes per version."""
    db.table("cluster_members").create(
        {"sdk": str, "version": str, "server": str, "signature": str, "team": str, "run_id": int, "seen": str},
        pk=("sdk", "version", "server"),
    )
    db.table("cluster_members").create_index(["sdk", "version", "signature"])
    db.table("clusters").create(
        {
            "sdk": str,
            "version": str,
            "signature": str,
            "rule": str,
            "summary": str,
            "parts": str,
            "trace": str,
            "symbols": str,
            "reproduction": str,
            "example_server": str,
            "first_seen": str,
            "crossed": str,
            "notes": str,
        },
        pk=("sdk", "version", "signature"),
    )
    db.table("release_notes").create(
        {"sdk": str, "version": str, "status": str, "url": str, "lines": str, "error": str, "fetched": str},
        pk=("sdk", "version"),
    )


class ClusterRow(TypedDict):
    sdk: str
    version: str
    signature: str
    rule: str
    summary: str
    parts: list[str]
    trace: str
    symbols: list[str]
    reproduction: str
    example_server: str
    first_seen: str
    crossed: str | None
    """When the cluster first spanned the threshold's number of teams (its replies were queued then); None: not yet."""
    notes: dict[str, Any] | None
    """What the release notes said of it when last read (`NotesFinding.as_dict`); None: not read."""
    servers: list[str]
    teams: list[str]


class ClusterMember(TypedDict):
    server: str
    team: str
    run_id: int
    seen: str


class ReleaseNotesRow(TypedDict):
    sdk: str
    version: str
    status: str
    """"ok" (lines hold the release's text), "missing" (no release for the tag), "error" (could not be read)."""
    url: str | None
    lines: list[str]
    error: str | None
    fetched: str


class ClusterTables:
    """The cluster queries of the `Store` (its `db` and lock)."""

    db: sqlite_utils.Database
    _lock: threading.RLock

    def record_cluster_member(self, cluster: NewCluster, server: str, team: str, run_id: int) -> ClusterRow:
        """File `server`'s result on (cluster["sdk"], cluster["version"]) under the cluster's signature (a server's
        earlier signature on that version is replaced); the cluster is created on its first member."""
        now = iso(utcnow())
        sdk, version, signature = cluster["sdk"], cluster["version"], cluster["signature"]
        with self._lock, self.db.conn:
            self.db.execute(
                "insert or replace into cluster_members (sdk, version, server, signature, team, run_id, seen) "
                "values (?, ?, ?, ?, ?, ?, ?)",
                [sdk, version, server, signature, team, run_id, now],
            )
            self.db.execute(
                "insert or ignore into clusters (sdk, version, signature, rule, summary, parts, trace, symbols, "
                "reproduction, example_server, first_seen) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    sdk,
                    version,
                    signature,
                    cluster["rule"],
                    cluster["summary"],
                    json.dumps(cluster["parts"]),
                    cluster["trace"],
                    json.dumps(cluster["symbols"]),
                    cluster["reproduction"],
                    server,
                    now,
                ],
            )
        found = self.cluster(sdk, version, signature)
        assert found is not None
        return found

    def forget_cluster_member(self, sdk: str, version: str, server: str) -> None:
        """`server` passed on `version` after all (a rerun): it is in no cluster of that version any more."""
        with self._lock, self.db.conn:
            self.db.execute(
                "delete from cluster_members where sdk = ? and version = ? and server = ?", [sdk, version, server]
            )

    def mark_cluster_crossed(self, sdk: str, version: str, signature: str) -> bool:
        """Record that the cluster crossed the threshold now; False when it had before (its replies went then)."""
        with self._lock, self.db.conn:
            cur = self.db.execute(
                "update clusters set crossed = ? where sdk = ? and version = ? and signature = ? and crossed is null",
                [iso(utcnow()), sdk, version, signature],
            )
            return cur.rowcount == 1

    def set_cluster_notes(self, sdk: str, version: str, signature: str, notes: dict[str, Any]) -> None:
        with self._lock, self.db.conn:
            self.db.execute(
                "update clusters set notes = ? where sdk = ? and version = ? and signature = ?",
                [json.dumps(notes, sort_keys=True), sdk, version, signature],
            )

    def cluster(self, sdk: str, version: str, signature: str) -> ClusterRow | None:
        rows = list(
            self.db.query(
                "select * from clusters where sdk = ? and version = ? and signature = ?", [sdk, version, signature]
            )
        )
        return self._with_members(rows[0]) if rows else None

    def cluster_members(self, sdk: str, version: str, signature: str) -> list[ClusterMember]:
        rows = self.db.query(
            "select server, team, run_id, seen from cluster_members where sdk = ? and version = ? and signature = ? "
            "order by server",
            [sdk, version, signature],
        )
        return [
            ClusterMember(server=r["server"], team=r["team"], run_id=int(r["run_id"]), seen=r["seen"]) for r in rows
        ]

    def clusters(self, sdk: str | None = None, limit: int = 1000) -> list[ClusterRow]:
        """The newest `limit` clusters with at least one member, the largest first among those of one moment."""
        where, params = ("where c.sdk = ?", [sdk]) if sdk else ("", [])
        rows = self.db.query(
            "select c.* from clusters c join cluster_members m on m.sdk = c.sdk and m.version = c.version "
            f"and m.signature = c.signature {where} group by c.sdk, c.version, c.signature "
            f"order by c.first_seen desc, count(*) desc, c.signature limit {int(limit)}",
            params,
        )
        return [self._with_members(row) for row in rows]

    def _with_members(self, row: dict[str, Any]) -> ClusterRow:
        members = self.cluster_members(row["sdk"], row["version"], row["signature"])
        return ClusterRow(
            sdk=row["sdk"],
            version=row["version"],
            signature=row["signature"],
            rule=row["rule"],
            summary=row["summary"],
            parts=json.loads(row["parts"]),
            trace=row["trace"],
            symbols=json.loads(row["symbols"]),
            reproduction=row["reproduction"],
            example_server=row["example_server"],
            first_seen=row["first_seen"],
            crossed=row["crossed"],
            notes=json.loads(row["notes"]) if row["notes"] else None,
            servers=[m["server"] for m in members],
            teams=sorted({m["team"] for m in members}),
        )

    # --- release notes, fetched once per version ----------------------------------------------------------

    def release_notes(self, sdk: str, version: str) -> ReleaseNotesRow | None:
        rows = list(self.db.query("select * from release_notes where sdk = ? and version = ?", [sdk, version]))
        if not rows:
            return None
        row = rows[0]
        return ReleaseNotesRow(
            sdk=row["sdk"],
            version=row["version"],
            status=row["status"],
            url=row["url"],
            lines=json.loads(row["lines"] or "[]"),
            error=row["error"],
            fetched=row["fetched"],
        )

    def put_release_notes(
        self, sdk: str, version: str, status: str, url: str | None, lines: list[str], error: str | None = None
    ) -> None:
        with self._lock:
            self.db.table("release_notes").upsert(
                {
                    "sdk": sdk,
                    "version": version,
                    "status": status,
                    "url": url,
                    "lines": json.dumps(lines),
                    "error": error,
                    "fetched": iso(utcnow()),
                },
                pk=("sdk", "version"),
            )
