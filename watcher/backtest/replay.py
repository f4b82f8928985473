"""One backtest: read the SDK's history, run the server's suites against every version of the period in
publication order (on its executor, `suites.concurrency` at a time), keep each result, and answer.

Each version's report is kept in the store under a fingerprint of what decides it (the server's files or
commit, its settings, the SDK package and version, the conformance suite); a later backtest finding the same
fingerprint reuses it instead of running again, so an interrupted backtest continues where it stopped and a
repeat costs nothing. A pass or fail is reused; an error (the watcher could not judge) is run again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import date
from pathlib import Path
from typing import Protocol

from watcher.backtest.analysis import FINAL_ONLY, WARNED, Point, findings
from watcher.backtest.answer import BacktestAnswer, FindingEntry, ProblemEntry, VersionEntry
from watcher.backtest.history import Period, Replayed, read_history, select
from watcher.backtest.problems import Judgement, judge
from watcher.boundary.launch import HostReason, ToolTimeout, run_tool
from watcher.clusters.backtest import signature_json
from watcher.config import LoadedConfig
from watcher.core import vault
from watcher.core.errors import WatcherError
from watcher.core.run_report import RunReport
from watcher.core.store import Store
from watcher.core.store_schema import BacktestResultRow, RunRow
from watcher.core.timefmt import iso, utcnow
from watcher.suites.build.env import files_digest
from watcher.suites.executors import execute
from watcher.suites.settings import Server
from watcher.suites.source import checkout
from watcher.suites.state import ERROR, sdk_package_of

FINGERPRINT_FORMAT = 1
REUSABLE = ("pass", "fail")


class BacktestError(WatcherError):
    """The backtest could not start: the history could not be read, or the period holds no version."""


class Progress(Protocol):
    def begin(self, server: str, total: int, reused: int) -> None: ...

    def started(self, index: int, total: int, version: str) -> None: ...

    def finished(self, index: int, total: int, version: str, verdict: str, seconds: float, reused: bool) -> None: ...

    def end(self, status: str, seconds: float) -> None: ...


class Silent:
    def begin(self, server: str, total: int, reused: int) -> None:
        pass

    def started(self, index: int, total: int, version: str) -> None:
        pass

    def finished(self, index: int, total: int, version: str, verdict: str, seconds: float, reused: bool) -> None:
        pass

    def end(self, status: str, seconds: float) -> None:
        pass


@dataclasses.dataclass
class Slot:
    replayed: Replayed
    index: int
    key: str
    verdict: str | None = None
    report: RunReport | None = None
    reused: bool = False
    seconds: float | None = None


def _digest_paths(paths: list[Path]) -> str:
    """The contents of files and folders the run reads beside the project (baselines, accept files)."""
    digest = hashlib.sha256()
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            digest.update(str(file).encode())
            try:
                digest.update(file.read_bytes())
            except OSError:
                digest.update(b"<missing>")
    return digest.hexdigest()[:16]


def _commit(loaded: LoadedConfig, server: Server) -> str:
    """The commit the server's git ref names now (one `git ls-remote`); empty when it cannot be asked."""
    source = server.source
    assert source is not None
    try:
        token = checkout.read_token(loaded, server, vault.environ())
    except checkout.CheckoutError:
        return ""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent", "GIT_TERMINAL_PROMPT": "0"}
    if token:
        env.update(checkout.auth_env(token))
    command = ["git", "ls-remote", "--", checkout.fetch_url(loaded, source), source.ref]
    try:
        done = run_tool(command, why=HostReason.GIT, env=env, timeout=60)
    except (OSError, ToolTimeout):
        return ""
    first = done.stdout.split()
    return first[0] if done.returncode == 0 and first else ""


def fingerprint(loaded: LoadedConfig, server: Server) -> str | None:
    """What decides a run's result besides the SDK version; None when it cannot be known (a git ref that
    cannot be resolved now): then nothing is reused."""
    material: dict[str, object] = {  # hashed as JSON
        "format": FINGERPRINT_FORMAT,
        "server": server.model_dump(mode="json"),
        "conformance": loaded.config.conformance.model_dump(mode="json"),
    }
    if server.source is not None:
        commit = _commit(loaded, server)
        if not commit:
            return None
        material["commit"] = commit
    elif server.path is not None:
        project = loaded.resolve(server.path)
        material["files"] = files_digest(project)
        extra = [f for f in (server.expected_failures, server.baseline_snapshot, server.accept) if f]
        material["extra"] = _digest_paths([loaded.resolve(f) for f in extra])
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:20]


def _with_package(loaded: LoadedConfig, server: Server, package: str) -> tuple[LoadedConfig, Server]:
    """The configuration as the runs see it: the server on `package` (from --sdk-package)."""
    if sdk_package_of(loaded.config, server) == package:
        return loaded, server
    changed = server.model_copy(update={"sdk_package": package})
    servers = [changed if s.name == server.name else s for s in loaded.config.servers]
    return dataclasses.replace(loaded, config=loaded.config.model_copy(update={"servers": servers})), changed


def params_key(server: str, package: str, since: date, until: date) -> str:
    return json.dumps({"server": server, "package": package, "since": since.isoformat(), "until": until.isoformat()})


def _run_row(backtest_id: int, slot: Slot, server: Server) -> RunRow:
    # A negative id is never a live run's: an Actions run key made from it cannot collide with one.
    return RunRow(
        id=-(backtest_id * 10_000 + slot.index),
        key=f"backtest:{backtest_id}:{server.name}@{slot.replayed.version}",
        server=server.name,
        sdk=server.sdk,
        sdk_version=slot.replayed.version,
        trigger=f"backtest:{backtest_id}",
        status="running",
        verdict=None,
        report=None,
        queued=iso(utcnow()),
        started=iso(utcnow()),
        finished=None,
        seconds=None,
    )


def run_backtest(
    loaded: LoadedConfig,
    store: Store,
    server_name: str,
    since: date,
    until: date,
    *,
    sdk_package: str | None = None,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> BacktestAnswer:
    """Replay the period against the server; returns the answer (also stored with the backtest). A
    backtest of the same server, package and period that did not finish is continued, not started anew."""
    progress = progress or Silent()
    stop = stop or threading.Event()
    began = time.monotonic()
    config = loaded.config
    base_server = config.server(server_name)
    sdk = config.sdk(base_server.sdk)
    package = sdk_package or sdk_package_of(config, base_server)
    source = sdk.model_copy(update={"package": package}) if package != sdk.package else sdk
    try:
        releases = read_history(config, store, source)
    except WatcherError as exc:
        raise BacktestError(f"cannot read the history of {package} from {sdk.registry}: {exc}") from exc
    period = select(sdk.registry, releases, since, until, on_line_of=base_server.baseline_sdk_version)
    if not period.versions:
        raise BacktestError(
            f"{sdk.registry} lists no version of {package} published {since.isoformat()} … {until.isoformat()}"
        )
    run_loaded, server = _with_package(loaded, base_server, package)
    params = params_key(server.name, package, since, until)
    earlier = store.unfinished_backtest(params)
    backtest_id = (
        earlier["id"]
        if earlier
        else store.create_backtest(server.name, sdk.name, package, since.isoformat(), until.isoformat(), params)
    )
    store.update_backtest(backtest_id, status="running")
    fp = fingerprint(run_loaded, server)
    slots = [
        Slot(r, i, f"{server.name}|{package}|{r.version}|{fp}" if fp else "") for i, r in enumerate(period.versions)
    ]
    for slot in slots:
        kept = store.backtest_result(slot.key) if slot.key else None
        if kept is not None and kept["verdict"] in REUSABLE:
            slot.verdict, slot.report, slot.reused, slot.seconds = (
                kept["verdict"],
                kept["report"],
                True,
                kept["seconds"],
            )
    total = len(slots)
    progress.begin(server.name, total, sum(s.reused for s in slots))
    for slot in slots:
        if slot.reused:
            progress.finished(slot.index + 1, total, slot.replayed.version, str(slot.verdict), 0.0, True)
    status = _run_pending(run_loaded, store, backtest_id, server, slots, progress, stop)
    answer = build_answer(backtest_id, server, sdk.registry, package, since, until, period, slots, status)
    answer["cost"]["seconds"] = round(time.monotonic() - began, 1)
    store.update_backtest(
        backtest_id,
        status=status,
        finished=iso(utcnow()),
        seconds=answer["cost"]["seconds"],
        answer=answer,
    )
    progress.end(status, answer["cost"]["seconds"])
    return answer


def _run_pending(
    loaded: LoadedConfig,
    store: Store,
    backtest_id: int,
    server: Server,
    slots: list[Slot],
    progress: Progress,
    stop: threading.Event,
) -> str:
    """Run every slot without a reused result, in publication order; "done" or "interrupted"."""
    pending = [s for s in slots if not s.reused]
    total = len(slots)

    def one(slot: Slot) -> RunReport | None:
        if stop.is_set():
            return None
        progress.started(slot.index + 1, total, slot.replayed.version)
        return execute(loaded, store, _run_row(backtest_id, slot, server), stop)

    running: dict[Future[RunReport | None], Slot] = {}
    interrupted = False
    with ThreadPoolExecutor(max_workers=loaded.config.suites.concurrency, thread_name_prefix="backtest") as pool:
        for slot in pending:
            running[pool.submit(one, slot)] = slot
        while running:
            try:
                done, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    slot = running.pop(future)
                    try:
                        report = future.result()
                    except Exception as exc:  # the executor failed around the run: an error result, no abort
                        reason = f"internal error: {type(exc).__name__}: {exc}"
                        report = {"verdict": ERROR, "reasons": [{"verdict": ERROR, "reason": reason}]}
                    if report is None or stop.is_set():
                        continue  # cancelled half-way: not a result
                    _keep(store, backtest_id, slot, report)
                    progress.finished(
                        slot.index + 1, total, slot.replayed.version, str(slot.verdict), slot.seconds or 0, False
                    )
            except KeyboardInterrupt:  # Ctrl-C: the runs under way are cancelled, what finished is kept
                stop.set()
                interrupted = True
    return "interrupted" if interrupted or stop.is_set() else "done"


def _keep(store: Store, backtest_id: int, slot: Slot, report: RunReport) -> None:
    slot.report, slot.verdict = report, str(report.get("verdict") or ERROR)
    slot.seconds = float(report.get("seconds") or 0.0)
    if slot.key:
        store.put_backtest_result(
            BacktestResultRow(
                key=slot.key,
                server=str(report.get("server")),
                package=str(report.get("sdk_package") or ""),
                version=slot.replayed.version,
                fingerprint=slot.key.rsplit("|", 1)[-1],
                verdict=slot.verdict,
                report=report,
                finished=iso(utcnow()),
                seconds=slot.seconds,
                backtest_id=backtest_id,
            )
        )


def _points(slots: list[Slot]) -> list[tuple[Slot, Point]]:
    """Each finished slot judged against the run of the latest final published before it."""
    judged: list[tuple[Slot, Point]] = []
    reference: RunReport | None = None
    for slot in sorted(slots, key=lambda s: s.index):
        if slot.report is None:
            continue
        r = slot.replayed
        judgement = judge(slot.report, reference)
        judged.append((slot, Point(r.version, r.published, r.prerelease, r.line, str(slot.verdict), judgement)))
        if not r.prerelease and "start" in judgement.judged:
            reference = slot.report
    return judged


def _problem_json(judgement: Judgement) -> list[ProblemEntry]:
    return [ProblemEntry(kind=p.kind, key=p.key, text=p.text, evidence=p.evidence) for p in judgement.problems]


def build_answer(
    backtest_id: int,
    server: Server,
    registry: str,
    package: str,
    since: date,
    until: date,
    period: Period,
    slots: list[Slot],
    status: str,
) -> BacktestAnswer:
    """The plain-data answer every rendering reads (terminal, JSON, Markdown, page, picture, Slack)."""
    judged = _points(slots)
    found = findings([p for _, p in judged])
    by_index = {slot.index: point for slot, point in judged}
    versions: list[VersionEntry] = []
    for slot in slots:
        r, point = slot.replayed, by_index.get(slot.index)
        report: RunReport = slot.report or {}
        versions.append(
            VersionEntry(
                version=r.version,
                published=iso(r.published),
                prerelease=r.prerelease,
                yanked=r.yanked,
                line=r.line,
                verdict=slot.verdict or "not run",
                reused=slot.reused,
                seconds=slot.seconds,
                reasons=[x["reason"] for x in report.get("reasons") or []],
                problems=_problem_json(point.judgement) if point else [],
                run_dir=report.get("run_dir"),
                signature=signature_json(report, package),
            )
        )
    rows: list[FindingEntry] = []
    for f in found:
        rows.append(
            FindingEntry(
                line=f.line,
                kind=f.problem.kind,
                key=f.problem.key,
                text=f.problem.text,
                evidence=f.problem.evidence,
                status=f.status,
                first_version=f.first_version,
                first_published=iso(f.first_published),
                final_version=f.final_version,
                final_published=iso(f.final_published) if f.final_published else None,
                lead_days=f.lead_days,
                sentence=f.sentence(),
            )
        )
    return BacktestAnswer(
        id=backtest_id,
        server=server.name,
        team=server.team,
        sdk=server.sdk,
        registry=registry,
        package=package,
        since=since.isoformat(),
        until=until.isoformat(),
        status=status,
        generated=iso(utcnow()),
        versions=versions,
        findings=rows,
        warned=[r for r in rows if r["status"] == WARNED],
        final_only=[r for r in rows if r["status"] == FINAL_ONLY],
        not_run=[s.replayed.version for s in slots if s.report is None],
        undated=period.undated,
        older_lines=period.older_lines,
        cost={
            "versions": len(slots),
            "ran": sum(1 for s in slots if s.report is not None and not s.reused),
            "reused": sum(1 for s in slots if s.reused),
            "seconds": 0.0,
        },
    )
