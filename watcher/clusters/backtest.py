"""Backtests of several servers, side by side: per SDK version, the servers that failed the same way (one
cluster per signature), with the lead time of the first warning (the days from the version to the final of its
line) and what the release notes say. Also the figures: how many investigations the clusters fold."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from typing_extensions import TypedDict

from watcher.backtest.answer import BacktestAnswer, SignatureEntry, VersionEntry
from watcher.clusters.record import notes_for
from watcher.clusters.signature import signature_of
from watcher.config import LoadedConfig
from watcher.core.run_report import RunReport
from watcher.core.store import Store


def signature_json(report: RunReport, package: str) -> SignatureEntry | None:
    """A backtest version's signature (kept in the answer, so a repeat needs no report to group it)."""
    found = signature_of(report, package) if report else None
    if found is None:
        return None
    return SignatureEntry(key=found.key, rule=found.rule, summary=found.summary, symbols="\n".join(found.symbols))


class Quote(TypedDict):
    """A release-notes line that names a cluster's failure."""

    version: str
    text: str
    url: str | None


@dataclass(frozen=True)
class VersionCluster:
    version: str
    published: str | None
    signature: str
    rule: str
    summary: str
    servers: list[str]
    teams: list[str]
    first_version: str
    """The first version of the same release line failing this way: its first warning."""
    final_version: str | None
    """The final of the version's release line, published at or after it (None: none in the period)."""
    lead_days: int | None
    """Days from the first warning to that final (None: no final in the period)."""
    notes: str
    quotes: list[Quote]

    def as_dict(self) -> dict[str, object]:
        """The cluster in `backtest --json`'s document."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class ClusterFigures:
    failing_results: int
    """Failing or erroring (server, version) results: one investigation each without clusters."""
    clusters: int
    """Distinct (version, signature) pairs: one investigation each with them."""
    signatures: int
    """Distinct signatures over every version: what is left when a failure that stays is looked into once."""
    shared: int
    """Clusters of more than one server."""
    explained: int
    """Shared clusters whose release notes name the failure."""

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class _Group:
    """The servers of several backtests that failed one version the same way."""

    entry: VersionEntry
    signature: SignatureEntry
    final: VersionEntry | None
    answers: list[BacktestAnswer] = field(default_factory=list)


def _final_after(answer: BacktestAnswer, entry: VersionEntry) -> VersionEntry | None:
    finals = [
        v
        for v in answer["versions"]
        if v["line"] == entry["line"] and not v["prerelease"] and (v["published"] or "") >= (entry["published"] or "")
    ]
    return min(finals, key=lambda v: v["published"] or "") if finals else None


def _days(start: str | None, end: str | None) -> int | None:
    if not start or not end:
        return None
    return (date.fromisoformat(end[:10]) - date.fromisoformat(start[:10])).days


def cluster_backtests(
    loaded: LoadedConfig, store: Store, answers: list[BacktestAnswer], *, read_notes: bool = True
) -> tuple[list[VersionCluster], ClusterFigures]:
    """The clusters of several backtests' answers per version (publication order, the largest first), and the
    figures. `read_notes`: read each shared cluster's release notes (once per version, through the store)."""
    groups: dict[tuple[str, str], _Group] = {}
    failing = 0
    for answer in answers:
        for entry in answer["versions"]:
            signature = entry.get("signature")
            if not signature:
                continue
            failing += 1
            group = groups.setdefault(
                (entry["version"], signature["key"]),
                _Group(entry, signature, _final_after(answer, entry)),
            )
            group.answers.append(answer)
    first: dict[tuple[str, str], VersionEntry] = {}  # (signature, line) → its earliest version's entry
    for (_, key), group in groups.items():
        entry = group.entry
        seen = first.get((key, entry["line"]))
        if seen is None or (entry["published"] or "") < (seen["published"] or ""):
            first[(key, entry["line"])] = entry
    clusters: list[VersionCluster] = []
    explained = 0
    known = sorted({entry["version"] for answer in answers for entry in answer["versions"]})
    for (version, key), group in groups.items():
        entry, signature, members, final = group.entry, group.signature, group.answers, group.final
        notes, quotes = "", list[Quote]()
        if read_notes and len(members) > 1:
            source = next((s for s in loaded.config.sdks if s.name == members[0]["sdk"]), None)
            baseline = loaded.config.server(members[0]["server"]).baseline_sdk_version
            report: RunReport = {"sdk_version": version, "baseline_sdk_version": baseline}
            finding = notes_for(loaded, store, source, report, signature["symbols"].split("\n"), known)
            notes = finding.sentence()
            quotes = [Quote(version=n.version, text=n.text, url=n.url) for n in finding.lines]
            explained += bool(finding.lines)
        clusters.append(
            VersionCluster(
                version=version,
                published=entry["published"],
                signature=key,
                rule=signature["rule"],
                summary=signature["summary"],
                servers=sorted(a["server"] for a in members),
                teams=sorted({a["team"] for a in members}),
                first_version=(earliest := first[(key, entry["line"])])["version"],
                final_version=final["version"] if final else None,
                lead_days=_days(earliest["published"], final["published"]) if final else None,
                notes=notes,
                quotes=quotes,
            )
        )
    clusters.sort(key=lambda c: (c.published or "", -len(c.servers), c.signature))
    shared = sum(1 for c in clusters if len(c.servers) > 1)
    signatures = len({c.signature for c in clusters})
    return clusters, ClusterFigures(failing, len(clusters), signatures, shared, explained)


def render_clusters(clusters: list[VersionCluster], figures: ClusterFigures) -> str:
    """The clusters as text lines under the backtests (the terminal and Markdown outputs)."""
    lines = ["", "Clusters: the servers that failed the same way, per version"]
    for c in clusters:
        count = f"{_plural(len(c.servers), 'server')} of {_plural(len(c.teams), 'team')}"
        lead = _lead(c)
        day = f" ({c.published[:10]})" if c.published else ""
        lines.append(f"  {c.version}{day}: {count}: {c.summary} [{c.rule} {c.signature}]{lead}")
        lines.append(f"      servers: {', '.join(c.servers)}")
        if c.notes:
            lines.append(f"      {c.notes}")
        lines += [f"      > {q['text']} ({q.get('url') or q['version']})" for q in c.quotes[:3]]
    lines.append(
        f"  {figures.failing_results} failing results in {figures.clusters} clusters ({figures.shared} shared by "
        f"several servers): {figures.failing_results - figures.clusters} investigations folded, "
        f"{figures.signatures} distinct failures over all versions; the release notes explained "
        f"{figures.explained} of the {figures.shared} shared clusters"
    )
    return "\n".join(lines)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _lead(cluster: VersionCluster) -> str:
    if cluster.lead_days is None:
        return f"; first at {cluster.first_version}, no final in the period"
    if cluster.first_version == cluster.final_version:
        return f"; shipped in {cluster.final_version} with no pre-release showing it first"
    return f"; first warning at {cluster.first_version}, {cluster.lead_days} days before {cluster.final_version}"
