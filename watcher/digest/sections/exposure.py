"""Section 2, where the team is affected: per server, each deprecated feature with the evidence that it is in
use — a capability its snapshot declares, an SDK deprecation warning of its latest suite run, an HTTP+SSE
endpoint, a passing conformance scenario that exercises the feature — or "nothing found"."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from watcher.config import LoadedConfig
from watcher.core.run_report import RunReport
from watcher.core.store import Store
from watcher.core.store_schema import RunRow
from watcher.digest.model import Evidence, Exposure, ServerFindings
from watcher.spec.registry import feature_key
from watcher.spec.removal import DeprecationRow
from watcher.spec.view import ordered_rows
from watcher.suites.judge.conformance import collect_checks
from watcher.suites.settings import Server

# Words that name a feature in what servers and SDKs say, by the registry row's key (its prefix). A row we
# have no entry for is matched by its own feature name. Patterns are case-insensitive unless marked.
FEATURE_TERMS: dict[str, tuple[str, ...]] = {
    "includecontext": (r"includeContext",),
    "http-sse": (
        r"http\s*\+\s*sse",
        r"(?-i:(?<![A-Z])SSE(?![A-Z]{2}))",  # SSE, SSEServerTransport; not CLASSES
        r"(?-i:(?<![A-Za-z])Sse(?=[A-Z]))",  # SseServerTransport
        r"\bsse\b",
        r"\bsse_",  # sse_client, sse_app
        r"server-sent events transport",
    ),
    "dynamic-client-registration": (r"dynamic client registration", r"client[_ ]registration"),
    "logging": (r"\blogging\b", r"notifications/message", r"\blogging/setLevel\b", r"\bsetLevel\b"),
    "sampling": (r"\bsampling\b", r"createMessage", r"create_message"),
    "roots": (r"\broots\b", r"roots/list", r"list_roots"),
}
# A match of the first also matching the second is about the first only ("includeContext … sampling").
MORE_SPECIFIC: dict[str, set[str]] = {"includecontext": {"sampling"}}
# Conformance scenarios are named after what they exercise; only these families are "used by the server" when
# such a scenario passes ("server-sse-…" scenarios test Streamable HTTP's streams, not the HTTP+SSE transport).
CONFORMANCE_FAMILIES = frozenset({"sampling", "roots", "logging", "includecontext"})


def _family(key: str) -> str | None:
    return next((family for family in FEATURE_TERMS if key.startswith(family)), None)


def _patterns(row: DeprecationRow) -> list[re.Pattern[str]]:
    family = _family(row["key"])
    if family is not None:
        return [re.compile(p, re.IGNORECASE) for p in FEATURE_TERMS[family]]
    name = re.sub(r"\([^)]*\)", "", row["feature"]).strip() or row["feature"]
    return [re.compile(re.escape(name), re.IGNORECASE)]


def features_named(text: str, rows: Sequence[DeprecationRow]) -> list[DeprecationRow]:
    """The deprecated rows that ``text`` speaks of."""
    hits = [row for row in rows if any(p.search(text) for p in _patterns(row))]
    families = {_family(row["key"]) for row in hits}
    suppressed = set().union(*(MORE_SPECIFIC.get(f or "", set()) for f in families))
    return [row for row in hits if _family(row["key"]) not in suppressed]


def _capability_rows(capability: str, rows: Sequence[DeprecationRow]) -> list[DeprecationRow]:
    wanted = feature_key(capability)
    return [row for row in rows if row["key"] == wanted or _family(row["key"]) == wanted]


SNAPSHOT_ERAS = ("legacy", "modern")


def _snapshot_servers(folder: Path) -> list[tuple[str, Path]]:
    """(era, server.json) of a snapshot folder: DIR/legacy + DIR/modern, or a single-era DIR."""
    found = [(era, folder / era / "server.json") for era in SNAPSHOT_ERAS if (folder / era / "server.json").is_file()]
    if not found and (folder / "server.json").is_file():
        found.append(("single era", folder / "server.json"))
    return found


def snapshot_evidence(
    folder: Path, label: str, rows: Sequence[DeprecationRow]
) -> tuple[list[tuple[str, Evidence]], str]:
    """Deprecated capabilities a snapshot's server.json declares → [(row key, evidence)], and what was read."""
    eras = _snapshot_servers(folder)
    declared: dict[str, list[str]] = {}
    for era, path in eras:
        try:
            server = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        capabilities = server.get("capabilities") if isinstance(server, dict) else None
        for capability in sorted(capabilities or {}):
            declared.setdefault(capability, []).append(era)
    found: list[tuple[str, Evidence]] = []
    for capability, in_eras in declared.items():
        where = f"{label}, {' and '.join(in_eras)} era{'s' if len(in_eras) > 1 else ''}"
        for row in _capability_rows(capability, rows):
            found.append((row["key"], Evidence("capability", f"declares the `{capability}` capability", where)))
    return found, (f"{label} ({', '.join(era for era, _ in eras)})" if eras else "")


def warning_evidence(report: RunReport, label: str, rows: Sequence[DeprecationRow]) -> list[tuple[str, Evidence]]:
    found = []
    for warning in report.get("deprecation_warnings") or []:
        message = str(warning.get("message", "")) if isinstance(warning, dict) else str(warning)
        kind = str(warning.get("kind", "DeprecationWarning")) if isinstance(warning, dict) else "DeprecationWarning"
        count = int(warning.get("count", 1)) if isinstance(warning, dict) else 1
        times = f" (×{count})" if count > 1 else ""
        for row in features_named(message, rows):
            found.append((row["key"], Evidence("sdk-warning", f"{kind}: {message}{times}", label)))
    return found


def conformance_evidence(report: RunReport, label: str, rows: Sequence[DeprecationRow]) -> list[tuple[str, Evidence]]:
    """Passing conformance scenarios that exercise a deprecated feature (the server did use it).

    The scored scenarios that passed are only counted in the report, so the run's result files are read
    (``run_dir/conformance/<revision>/results``) while the run folder is still kept; unscored scenarios are
    listed in the report itself.
    """
    passed: dict[str, str] = {}
    run_dir = report.get("run_dir")
    for entry in report.get("conformance") or []:
        if not isinstance(entry, dict):
            continue
        revision = str(entry.get("requirements", ""))
        for unscored in entry.get("unscored") or []:
            if unscored.get("passed"):
                passed.setdefault(str(unscored.get("scenario")), revision)
        if run_dir and revision:
            results = Path(run_dir) / "conformance" / revision / "results"
            if results.is_dir():
                for scenario, checks in collect_checks(results).items():
                    statuses = {str(c.get("status")) for c in checks}
                    if "SUCCESS" in statuses and not statuses & {"FAILURE"}:
                        passed.setdefault(scenario, revision)
    found = []
    candidates = [r for r in rows if _family(r["key"]) in CONFORMANCE_FAMILIES or _family(r["key"]) is None]
    for scenario, revision in sorted(passed.items()):
        for row in features_named(scenario.replace("-", " ").replace("_", " "), candidates):
            found.append(
                (row["key"], Evidence("conformance", f"conformance scenario `{scenario}` passed ({revision})", label))
            )
    return found


def transport_evidence(server: Server) -> list[Evidence]:
    path = server.http_path.rstrip("/")
    if server.transport == "http" and (path.endswith("/sse") or path == "sse"):
        return [Evidence("transport", f"serves an HTTP+SSE endpoint (`{server.http_path}`)", "configuration")]
    return []


def latest_run(store: Store, server: str, look_back: int = 20) -> RunRow | None:
    """The newest finished run that saw the server running (a beta that would not even install shows no
    warnings or scenarios, and must not hide an earlier run's evidence); else the newest finished run."""
    done = [r for r in store.runs(status="done", server=server, limit=look_back) if isinstance(r.get("report"), dict)]
    for run in done:
        report = run["report"]
        assert report is not None  # kept by the filter above
        if (report.get("start") or {}).get("ok") or report.get("deprecation_warnings") or report.get("conformance"):
            return run
    return done[0] if done else None


def _run_label(run: RunRow) -> str:
    return f"suite run #{run['id']} ({run['sdk']} {run['sdk_version']})"


def server_findings(
    loaded: LoadedConfig, store: Store, server: Server, rows: Sequence[DeprecationRow]
) -> ServerFindings:
    deprecated = [r for r in rows if r["state"] == "deprecated"]
    evidence: list[tuple[str, Evidence]] = []
    checked: list[str] = []
    gaps: list[str] = []
    if server.baseline_snapshot and server.source is None:  # a git source's is in its repository, not here
        folder = loaded.resolve(server.baseline_snapshot)
        found, read = snapshot_evidence(folder, f"baseline snapshot {server.baseline_snapshot}", deprecated)
        evidence += found
        if read:
            checked.append(read)
        else:
            gaps.append(f"baseline snapshot {server.baseline_snapshot} has no server.json")
    else:
        gaps.append("no baseline snapshot configured")
    run = latest_run(store, server.name)
    report = run["report"] if run and isinstance(run.get("report"), dict) else None
    if run is None or report is None:
        gaps.append("no finished suite run yet")
    else:
        label = _run_label(run)
        checked.append(f"{label}: SDK deprecation warnings, conformance")
        evidence += warning_evidence(report, label, deprecated)
        evidence += conformance_evidence(report, label, deprecated)
        candidate = Path(str(report.get("run_dir", ""))) / "snapshot" if report.get("run_dir") else None
        if candidate is not None and candidate.is_dir():
            found, read = snapshot_evidence(candidate, f"{label} snapshot", deprecated)
            evidence += found
            if read:
                checked.append(read)
    transport = transport_evidence(server)
    checked.append(f"transport: {server.transport}" + (f" at {server.http_path}" if server.transport == "http" else ""))
    sse = [r for r in deprecated if _family(r["key"]) == "http-sse"]
    evidence += [(row["key"], item) for row in sse for item in transport]
    by_key: dict[str, list[Evidence]] = {}
    for key, item in evidence:
        bucket = by_key.setdefault(key, [])
        if item not in bucket:
            bucket.append(item)
    exposures = [
        Exposure(row["feature"], row["key"], row.get("earliest_removal"), row.get("days_left"), by_key[row["key"]])
        for row in ordered_rows(deprecated)
        if row["key"] in by_key
    ]
    return ServerFindings(server.name, server.sdk, exposures, checked, gaps)
