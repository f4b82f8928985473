"""What follows each finished run: its signature filed in its cluster (per SDK version), the cluster's figures
written into the report (its notice and run page show them), and — the first time the cluster spans
`clusters.threshold_teams` teams — one reply per team in it and one operator notice with the draft upstream report.
The release notes are read once per version, when a cluster first needs them."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from watcher.clusters import release_notes
from watcher.clusters.notices import operator_notices, team_reply
from watcher.clusters.release_notes import NotesFinding
from watcher.clusters.signature import Signature, sdk_module, signature_of
from watcher.clusters.upstream import draft
from watcher.config import LoadedConfig
from watcher.core.errors import ConfigError
from watcher.core.run_report import ClusterPart, RunReport
from watcher.core.store import Store
from watcher.core.store_clusters import ClusterRow, NewCluster
from watcher.core.store_schema import Notice
from watcher.sources.settings import SdkSource

log = logging.getLogger(__name__)


def _source(loaded: LoadedConfig, sdk: str) -> SdkSource | None:
    return next((s for s in loaded.config.sdks if s.name == sdk), None)


def notes_for(
    loaded: LoadedConfig,
    store: Store,
    source: SdkSource | None,
    report: RunReport,
    symbols: list[str],
    known: Sequence[str] = (),
) -> NotesFinding:
    """The notes between the report's baseline and its version (of those seen, or in `known`), fetched first
    if not stored yet."""
    if source is None or source.release_notes is None:
        return release_notes.explain(store, source, [], symbols)
    limit = loaded.config.clusters.notes_versions
    baseline, version = report.get("baseline_sdk_version"), str(report["sdk_version"])
    wanted = release_notes.versions_between(store, source, baseline, version, limit, known)
    notes = source.release_notes
    if notes.repo:
        release_notes.fetch_github_notes(loaded, store, source, wanted)
    elif notes.changelog:
        env_path = str((report.get("install") or {}).get("path") or "")
        todo = [v for v in wanted if store.release_notes(source.name, v) is None]
        if todo and env_path:
            release_notes.read_changelog(store, source, env_path, sdk_module(source.package), todo)
    return release_notes.explain(store, source, wanted, symbols)


def _cluster_fields(report: RunReport, signature: Signature) -> NewCluster:
    return {
        "sdk": report["sdk"],
        "version": report["sdk_version"],
        "signature": signature.key,
        "rule": signature.rule,
        "summary": signature.summary,
        "parts": list(signature.parts),
        "trace": signature.trace,
        "symbols": list(signature.symbols),
        "reproduction": signature.reproduction,
    }


def after_result(loaded: LoadedConfig, store: Store, report: RunReport, run_id: int) -> list[Notice]:
    """File the result in its cluster and write `report["cluster"]`; the notices to queue after its own result
    (empty unless this result made the cluster cross the threshold)."""
    source = _source(loaded, str(report.get("sdk")))
    try:
        team = loaded.config.team(loaded.config.server(str(report.get("server"))).team).name
    except ConfigError:
        return []  # a server removed since: it is in no cluster
    if source is None or "sdk_version" not in report:
        return []
    signature = signature_of(report, source.package)
    if signature is None:
        store.forget_cluster_member(source.name, str(report["sdk_version"]), str(report["server"]))
        return []
    cluster = store.record_cluster_member(_cluster_fields(report, signature), str(report["server"]), team, run_id)
    threshold = loaded.config.clusters.threshold_teams
    # An error is the watcher's own trouble (its registry, its tools), never evidence against the SDK.
    likely = len(cluster["teams"]) >= threshold and report.get("verdict") == "fail"
    summary: ClusterPart = {
        "signature": signature.key,
        "rule": signature.rule,
        "summary": signature.summary,
        "parts": list(signature.parts),
        "servers": len(cluster["servers"]),
        "teams": len(cluster["teams"]),
        "threshold_teams": threshold,
        "likely_sdk": likely,
        "first_seen": cluster["first_seen"],
    }
    report["cluster"] = summary
    if not likely:
        return []
    notes = notes_for(loaded, store, source, report, list(signature.symbols))
    summary["notes"] = notes.as_dict()
    store.set_cluster_notes(source.name, cluster["version"], cluster["signature"], summary["notes"])
    if not store.mark_cluster_crossed(source.name, cluster["version"], cluster["signature"]):
        return []  # crossed before: its teams were told then; this result says it in its own notice
    log.info(
        "failure cluster %s on %s %s crossed %d teams: %d servers",
        cluster["signature"],
        source.name,
        cluster["version"],
        threshold,
        len(cluster["servers"]),
    )
    return crossing_notices(loaded, cluster, source, report.get("baseline_sdk_version"), notes)


def crossing_notices(
    loaded: LoadedConfig, cluster: ClusterRow, source: SdkSource, baseline: str | None, notes: NotesFinding
) -> list[Notice]:
    """One reply per team of the cluster, then the operators' notice with the draft upstream report."""
    replies = [team_reply(loaded, cluster, team, notes) for team in cluster["teams"]]
    upstream = draft(cluster, source.registry, source.package, baseline, notes)
    return replies + operator_notices(loaded, cluster, upstream)
