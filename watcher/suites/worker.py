"""The run queue: a new SDK release queues a run per server built on it; workers drain the queue.

The queue lives in the store (de-duplicated, persisted across restarts); each finished run puts
one threaded reply in the outbox for the server's team. What follows a finished run (the model evaluation)
is not known here: the caller passes its `followers` (watcher/pipeline.py wires the evaluation).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal, NotRequired, Protocol, TypedDict

from watcher.clusters.record import after_result as cluster_after_result
from watcher.config import LoadedConfig
from watcher.core import clock
from watcher.core.errors import ConfigError
from watcher.core.run_report import REPORT_VERSION, RunReport
from watcher.core.store import Store
from watcher.core.store_schema import Notice, RunRow
from watcher.decisions.records import result_after_slack
from watcher.live import ConfigSource
from watcher.notify import keys
from watcher.sources import versions
from watcher.sources.events import ReleaseEvent
from watcher.suites.executors import execute
from watcher.suites.executors.fanout import Limits, run_batch
from watcher.suites.notices import result_notice
from watcher.suites.runner import version_refusal
from watcher.suites.settings import GitHubActionsExecutor, Server
from watcher.suites.state import ERROR, REPORT_FILE
from watcher.suites.timings import run_timings

log = logging.getLogger(__name__)


FollowerName = Literal["evaluation"]
"""What may follow a run (watcher/pipeline.py wires each): the outcome's key for its verdict."""
_NOTICE_KEYS: dict[FollowerName, Literal["evaluation_notice"]] = {"evaluation": "evaluation_notice"}


@dataclass(frozen=True)
class Followed:
    """What followed a finished run: its verdict goes in the outcome under `name`, and its reply, made once the
    run's result is in the outbox (threaded under it when the result is threaded), under `<name>_notice`."""

    name: FollowerName
    verdict: str
    reply: Callable[[bool], Notice]


class RunOutcome(TypedDict):
    """One finished run as the worker hands it on (`process_queue`'s result, `on_result`'s argument)."""

    run_id: int
    server: str
    sdk: str
    sdk_version: str
    verdict: str | None
    seconds: float
    report: RunReport
    notice: str | None
    """The outbox key of the run's result (None: none was sent)."""
    interrupted: NotRequired[bool]
    """Stopped half-way by a shutdown: queued again."""
    cluster_notices: NotRequired[list[str]]
    evaluation: NotRequired[str]
    evaluation_notice: NotRequired[str]


class Follower(Protocol):
    def __call__(self, loaded: LoadedConfig, report: RunReport, stop: threading.Event | None) -> Followed | None:
        """Called with each finished run's report before it is recorded (it may add to it); None: nothing ran."""


def queue_for_release(loaded: LoadedConfig, store: Store, sdk: str, version: str, prerelease: bool) -> list[str]:
    """Queue a run for every server on `sdk`; returns the servers newly queued (not queued before).

    Pre-releases always queue; a stable release only when `suites.on_stable` is set.
    """
    config = loaded.config
    if not prerelease and not config.suites.on_stable:
        return []
    if not _runnable(loaded, sdk, version):
        return []
    trigger = keys.release_event(sdk, version)
    return [
        server.name
        for server in config.servers
        if server.sdk == sdk and store.queue_run(server.name, sdk, version, trigger)
    ]


def _runnable(loaded: LoadedConfig, sdk: str, version: str) -> bool:
    """A version that does not parse under its scheme, or holds unsafe characters, is recorded and shown, never run."""
    source = next((s for s in loaded.config.sdks if s.name == sdk), None)
    problem = versions.run_refusal(source.registry, version) if source else f"no SDK named {sdk!r}"
    if problem:
        log.warning("no suite run for %s %r: %s", sdk, version, problem)
    return problem is None


def queue_after_poll(
    loaded: LoadedConfig, store: Store, new: Sequence[ReleaseEvent], baseline_newest: dict[str, str]
) -> list[str]:
    """The runs a poll leads to: one per server for each new version, and — when an SDK was just
    baselined and `suites.on_baseline` is set — one per server against that SDK's newest version, so a
    team learns where it stands from the start. Returns "server@version" for each run newly queued."""
    queued = [
        f"{name}@{release.version}"
        for release in new
        for name in queue_for_release(loaded, store, release.sdk, release.version, release.prerelease)
    ]
    if loaded.config.suites.on_baseline:
        for sdk, version in baseline_newest.items():
            if not _runnable(loaded, sdk, version):
                continue
            for server in loaded.config.servers:
                if server.sdk == sdk and store.queue_run(
                    server.name, sdk, version, keys.baseline_trigger(sdk, version)
                ):
                    queued.append(f"{server.name}@{version}")
    return queued


def _execute(
    loaded: LoadedConfig, store: Store, run: RunRow, stop: threading.Event | None, followers: Sequence[Follower]
) -> RunOutcome:
    started = time.monotonic()
    taken = clock.now()
    try:
        report = execute(loaded, store, run, stop)
    except ConfigError as exc:  # the server was removed from the config after the run was queued
        report = {
            "report_version": REPORT_VERSION,
            "server": run["server"],
            "sdk": run["sdk"],
            "sdk_version": run["sdk_version"],
            "verdict": ERROR,
            "reasons": [{"verdict": ERROR, "reason": str(exc)}],
        }
    return _conclude(loaded, store, run, report, stop, started, taken, followers)


def _conclude(
    loaded: LoadedConfig,
    store: Store,
    run: RunRow,
    report: RunReport,
    stop: threading.Event | None,
    started: float,
    taken: datetime,
    followers: Sequence[Follower] = (),
) -> RunOutcome:
    """A run's report recorded, and its result (and what followed it) put in the outbox: the outcome."""
    followed: list[Followed] = []
    if not (stop is not None and stop.is_set()):
        followed = [f for follower in followers if (f := follower(loaded, report, stop)) is not None]
    seconds = float(report.get("seconds") or round(time.monotonic() - started, 2))
    report["timings"] = run_timings(store, run, report, taken)
    _rewrite_report_file(report)
    outcome: RunOutcome = {
        "run_id": run["id"],
        "server": run["server"],
        "sdk": run["sdk"],
        "sdk_version": run["sdk_version"],
        "verdict": report["verdict"],
        "seconds": seconds,
        "report": report,
        "notice": None,
    }
    if stop is not None and stop.is_set():
        # Stopped half-way: recorded as interrupted, and queued again for the next start.
        store.interrupt_run(run["id"], report)
        outcome["interrupted"] = True
        log.warning(
            "suite run %s (%s against %s) interrupted by shutdown; queued again",
            run["id"],
            run["server"],
            run["sdk_version"],
            extra={"server": run["server"], "run_id": run["id"]},
        )
        return outcome
    if keys.is_onboarding_trigger(run.get("trigger")):
        store.finish_run(run["id"], report["verdict"], report, seconds)
        return outcome  # a team repository's first run: its verdict goes in the one onboarding message
    clustered = _clustered(loaded, store, run, report)
    store.finish_run(run["id"], report["verdict"], report, seconds)
    try:
        notice = result_notice(loaded, report, run["id"])
        if keys.is_baseline_trigger(run.get("trigger")):
            # A first look at an SDK the watcher just started following: no beta alert to reply to.
            notice = dataclasses.replace(notice, thread_of=None)
    except ConfigError as exc:
        log.warning("no notice for run %s: %s", run["id"], exc, extra={"server": run["server"], "run_id": run["id"]})
        return outcome
    slack_notice = result_after_slack(store, notice, run["sdk"], run["sdk_version"], run.get("trigger"), clock.now())
    if slack_notice is None:
        log.info("result of run %s not sent: %s is muted for team %s from Slack", run["id"], run["sdk"], notice.team)
        _enqueue_all(store, [c for c in clustered if c.team != notice.team])
        return outcome
    notice = slack_notice
    store.enqueue(notice)
    outcome["notice"] = notice.key
    _enqueue_all(store, clustered)
    outcome["cluster_notices"] = [c.key for c in clustered]
    for follow in followed:
        reply = follow.reply(notice.thread_of is not None)
        store.enqueue(reply)
        outcome[follow.name] = follow.verdict
        outcome[_NOTICE_KEYS[follow.name]] = reply.key
    return outcome


def _clustered(loaded: LoadedConfig, store: Store, run: RunRow, report: RunReport) -> list[Notice]:
    """The result filed in its failure cluster (watcher/clusters); the replies a first crossing calls for."""
    try:
        notices = cluster_after_result(loaded, store, report, run["id"])
    except Exception:  # a bug there must not cost the run its result
        log.exception("run %s could not be filed in a failure cluster", run["id"])
        return []
    if keys.is_baseline_trigger(run.get("trigger")):  # no beta alert to reply to
        return [dataclasses.replace(n, thread_of=None) for n in notices]
    return notices


def _enqueue_all(store: Store, notices: list[Notice]) -> None:
    for notice in notices:
        store.enqueue(notice)


def _rewrite_report_file(report: RunReport) -> None:
    """The run folder's report.json gets the timings too (the runner wrote it before they were known)."""
    run_dir = Path(str(report.get("run_dir") or ""))
    if report.get("run_dir") and run_dir.is_dir():
        with contextlib.suppress(OSError):
            (run_dir / REPORT_FILE).write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")


def process_queue(
    source: ConfigSource,
    store: Store,
    stop: threading.Event | None = None,
    on_result: Callable[[RunOutcome], None] | None = None,
    *,
    fanout_limits: Limits | None = None,
    followers: Sequence[Follower] = (),
) -> list[RunOutcome]:
    """Run queued checks, at most `suites.concurrency` at once, until the queue is empty or `stop` is set.

    Returns one outcome per run finished here: run_id, server, sdk_version, verdict, seconds, report,
    notice (the outbox key). `on_result` is called with each outcome as its run finishes (the service
    delivers the threaded result then, not when the whole queue is done). Several github-actions runs
    claimed together go to the fan-out as one batch (watcher/suites/executors/fanout.py: paced dispatches,
    one listing per repository); they happen on GitHub, so they do not count against the concurrency.
    `fanout_limits` scales the fan-out's pacing (tests, benchmarks). `followers` run after each finished run
    (watcher/pipeline.py passes the evaluation's); their replies follow the run's result in the outbox.
    Given the service's live configuration, each run claimed takes the one in force at that moment (a server
    a team file added while the queue drains is known to its run).
    """
    limit = source.loaded.config.suites.concurrency
    outcomes: list[RunOutcome] = []
    running: set[Future[RunOutcome]] = set()
    batches: list[threading.Thread] = []
    remote_futures: set[Future[RunOutcome]] = set()
    with ThreadPoolExecutor(max_workers=limit, thread_name_prefix="suite-run") as pool:
        while True:
            remote: list[tuple[RunRow, Server]] = []
            loaded = source.loaded
            local = len(running - remote_futures)
            while local < limit and not (stop is not None and stop.is_set()):
                run = store.claim_run()
                if run is None:
                    break
                loaded = source.loaded
                log.info(
                    "suite run %s: %s against %s",
                    run["id"],
                    run["server"],
                    run["sdk_version"],
                    extra={"server": run["server"], "run_id": run["id"]},
                )
                server = _actions_server(loaded, run)
                if server is not None:
                    remote.append((run, server))
                    continue
                running.add(pool.submit(_execute, loaded, store, run, stop, followers))
                local += 1
            if len(remote) == 1:  # one alone: followed by itself, as ever
                running.add(pool.submit(_execute, loaded, store, remote[0][0], stop, followers))
            elif remote:
                futures = _start_batch(loaded, store, remote, stop, fanout_limits, batches, followers)
                remote_futures |= futures
                running |= futures
            if not running:
                for thread in batches:
                    thread.join()
                return outcomes
            done, running = _wait_some(running)
            for future in done:
                try:
                    outcome = future.result()
                except Exception:  # the store failed under a run: log it, keep draining the queue
                    log.exception("a suite run could not be recorded")
                    continue
                outcomes.append(outcome)
                if on_result is not None:
                    on_result(outcome)


def _actions_server(loaded: LoadedConfig, run: RunRow) -> Server | None:
    """The run's server when it runs on GitHub Actions and may be run (else None: the usual path)."""
    try:
        server = loaded.config.server(run["server"])
    except ConfigError:
        return None
    if not isinstance(server.executor, GitHubActionsExecutor):
        return None
    if version_refusal(loaded.config, server, run["sdk_version"]):
        return None
    return server


def _start_batch(
    loaded: LoadedConfig,
    store: Store,
    remote: list[tuple[RunRow, Server]],
    stop: threading.Event | None,
    limits: Limits | None,
    threads: list[threading.Thread],
    followers: Sequence[Follower],
) -> set[Future[RunOutcome]]:
    """The batch on its own thread; one future per run, resolved as that run's report is delivered."""
    futures: dict[int, Future[RunOutcome]] = {}
    for run, _ in remote:
        futures[run["id"]] = Future()
    started, taken = time.monotonic(), clock.now()

    def deliver(run: RunRow, report: RunReport) -> None:
        future = futures[run["id"]]
        try:
            future.set_result(_conclude(loaded, store, run, report, stop, started, taken, followers))
        except Exception as exc:  # the store failed under a run: the future carries it to the worker
            future.set_exception(exc)

    def batch() -> None:
        try:
            run_batch(loaded, store, remote, stop, deliver, limits=limits)
        except Exception as exc:
            log.exception("the GitHub Actions fan-out failed")
            for future in futures.values():
                if not future.done():
                    future.set_exception(exc)

    thread = threading.Thread(target=batch, name="suite-fanout", daemon=True)
    threads.append(thread)
    thread.start()
    return set(futures.values())


def _wait_some(futures: set[Future[RunOutcome]]) -> tuple[set[Future[RunOutcome]], set[Future[RunOutcome]]]:
    done, pending = wait(futures, return_when=FIRST_COMPLETED)
    return set(done), set(pending)
