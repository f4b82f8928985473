"""The long-running service: APScheduler jobs for polls, deliveries, suite runs and the digest."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import httpx
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger
from typing_extensions import TypedDict

from watcher.boundary import reaper
from watcher.config import LoadedConfig, open_state, state_path
from watcher.core import clock, interrupts, progress
from watcher.core.errors import PollFailed
from watcher.core.instance import single_instance
from watcher.core.store import Store
from watcher.core.timefmt import utcnow
from watcher.digest.schedule import register_digest_job, send_due_digests
from watcher.live import LiveConfig
from watcher.notify.delivery import deliver_outbox, make_sink
from watcher.notify.destination import describe_destination
from watcher.notify.settings import slack_credentials
from watcher.ops.health import HttpServer, Readiness, build_app
from watcher.pipeline import poll_cycle, process_queue
from watcher.polling.cadence import Cadence, current_cadence, next_poll, plan_budget
from watcher.polling.poll import PollResult
from watcher.spec import watch as spec_watch


class Trigger(TypedDict, total=False):
    """How APScheduler runs a job: `add_job`'s trigger keyword arguments (an interval, and when it first runs)."""

    trigger: Literal["interval"]
    minutes: float
    seconds: float
    next_run_time: datetime


Job = tuple[str, Callable[[], None], Trigger]
"""A job of the service: its name, what it runs, and its trigger."""

log = logging.getLogger(__name__)
READINESS_FIRST_MINUTES = 30
"""The readiness pass's first run after start, at the earliest."""


@dataclass
class Service:
    initial: LoadedConfig
    """The central config file as read at start; the live configuration (`live`) is what every part reads."""
    store: Store
    stop: threading.Event = field(default_factory=threading.Event)
    last_success: dict[str, datetime] = field(default_factory=dict)
    """Job name → when it last finished without an exception (readiness)."""

    def __post_init__(self) -> None:
        loaded = self.initial
        if self.initial.config.repos or self.initial.config.discover.github:
            from watcher.repos.sync import effective_config

            loaded = effective_config(self.initial, self.store)  # the last good team servers until the first sync
        self.live = LiveConfig(loaded, self.initial)
        """The one configuration every part reads (watcher.live): replaced whole when a file changes."""
        from watcher.reload import ConfigKeeper

        self.keeper = ConfigKeeper(self.live, self.store, lambda: self.prebuilder)
        self.delivery_lock = threading.Lock()
        self.digest_caught_up = False
        self.failed_jobs: dict[str, str] = {}
        """Job name → its last exception (cleared when it succeeds): what `run --once` reports."""
        self.partial: dict[str, str] = {}
        """What a job did not finish although it did not raise: sources failed, notices undelivered."""
        self.budget = plan_budget(self.loaded.config)
        self.active_scheduler: BackgroundScheduler | None = None
        self._scheduling = threading.Lock()
        self._scheduling_closed = False
        self.prebuilder: Any = None
        """A watcher.suites.build.prebuild.Prebuilder while the service runs (None: runs build their own)."""
        self.in_window: bool | None = None
        self.first_cycle: set[str] | None = None
        """Jobs still to finish once before the first cycle is done (its progress shown meanwhile); None: done."""

    @property
    def loaded(self) -> LoadedConfig:
        """The configuration in force now (central file and team servers): read it per job, never keep it."""
        return self.live.loaded

    @property
    def central(self) -> LoadedConfig:
        """The central config file as last read (without the team repositories' servers)."""
        return self.live.central

    @property
    def has_repos(self) -> bool:
        return bool(self.central.config.repos or self.central.config.discover.github)

    # --- jobs ----------------------------------------------------------------------------------------

    def poll_sdks(self, only: tuple[str, ...] | None = None, job: str = "poll_sdks") -> None:
        """Poll every SDK source, or only the ones named (the calendar-aware groups); `job` names the
        scheduler job whose unfinished work (failed sources) `run --once` reports."""
        loaded = self.loaded
        if only is not None:
            config = loaded.config.model_copy(update={"sdks": [s for s in loaded.config.sdks if s.name in only]})
            loaded = LoadedConfig(config=config, path=loaded.path, base_dir=loaded.base_dir)
        progress.stage(f"polling {len(loaded.config.sdks)} SDK source(s) ({_group_name(job, only)})")
        poll_cycle(
            loaded,
            self.store,
            self.deliver,
            queue_with=self.loaded,
            stop=self.stop,
            after_queue=lambda result, queued: self._after_poll(result, queued, job, only),
        )

    def _after_poll(self, result: PollResult, queued: list[str], job: str, only: tuple[str, ...] | None) -> None:
        """Start the queued runs, log the poll and note its failed sources; every source failed raises
        (nothing is delivered then)."""
        if queued:
            log.info("suite runs queued: %s", ", ".join(queued))
            if self.first_cycle is not None:
                self.first_cycle.add("run_suites")  # the first cycle includes the runs its polls queued
            self.start_queued_work()
        (log.warning if result.failed else log.info)(
            "poll: %d new version(s), %d source(s) failed%s (%s, %d source(s))",
            len(result.new),
            len(result.failed),
            " (baseline taken)" if result.baseline else "",
            _group_name(job, only),
            len(result.outcomes),
        )
        if result.failed:
            self.partial[job] = "; ".join(f"{f['sdk']}: {f['error']}" for f in result.failed)
        else:
            self.partial.pop(job, None)
        if result.outcomes and all(not o.ok for o in result.outcomes):
            raise PollFailed("every source failed: " + "; ".join(f"{f['sdk']}: {f['error']}" for f in result.failed))

    def poll_spec(self) -> None:
        try:
            started = utcnow()
            progress.stage("reading the spec's deprecated features and releases")
            summary = asyncio.run(_with_client(lambda client: spec_watch.poll_spec(self.loaded, self.store, client)))
            self.store.record_poll("spec", "spec", started, summary.get("ok", False), summary.get("error"))
            from watcher.polling.alerts import check_sources

            check_sources(self.store, self.loaded.config)
            if summary.get("ok"):
                log.info("spec poll: ok")
            else:  # an outside part failing: WARNING, as an SDK source's failure is
                log.warning("spec poll: failed: %s", summary.get("error"))
            if summary.get("ok"):
                self.partial.pop("poll_spec", None)
            else:
                self.partial["poll_spec"] = f"spec: {summary.get('error')}"
            self.deliver()
        finally:
            # A digest missed while the service was down goes out once at start, after the spec was read
            # (APScheduler's in-memory job store forgets missed cron times across a restart).
            if not self.digest_caught_up:
                self.digest_caught_up = True
                self.send_digest()

    def poll_window_sdks(self) -> None:
        """The window SDKs' poll; it re-plans its own next run from the calendar each time."""
        try:
            self.poll_sdks(self.budget.window_sources, job="poll_window_sdks")
        finally:
            self.replan_window_polls()

    def cadence(self, now: datetime | None = None) -> Cadence:
        return current_cadence(self.loaded, self.store, self.budget, now or clock.now())

    def replan_window_polls(self, now: datetime | None = None) -> Cadence:
        """Set the window poll's interval and next run: one interval on, or when a window opens or closes."""
        now = now or clock.now()
        cadence = self.cadence(now)
        # The service's clock may be pinned (rehearsals, tests); APScheduler runs on the system clock.
        fire = datetime.now(UTC) + (next_poll(cadence, now) - now)
        trigger = IntervalTrigger(minutes=cadence.window_interval, start_date=fire, timezone=UTC)
        self.change_schedule(
            lambda scheduler: (
                scheduler.get_job("poll_window_sdks") is not None
                and scheduler.reschedule_job("poll_window_sdks", trigger=trigger)
            )
        )
        if cadence.in_window != self.in_window:
            self.in_window = cadence.in_window
            log.info("polling cadence: %s", cadence.reason)
        return cadence

    def start_queued_work(self) -> None:
        """Pre-build the queued runs' environments and start the run worker now, not at its next tick."""
        if self.prebuilder is not None:
            for run in self.store.runs(status="queued"):
                self.prebuilder.submit(run["server"], run["sdk_version"])
        self.change_schedule(
            lambda scheduler: (
                scheduler.get_job("run_suites") is not None
                and scheduler.modify_job("run_suites", next_run_time=datetime.now(UTC))
            )
        )

    def change_schedule(self, change: Callable[[BackgroundScheduler], object]) -> None:
        """Apply a change to the running scheduler from a job or another thread, never once stopping has
        begun: APScheduler's shutdown holds its job-store lock while it waits for the running jobs, so a job
        asking it anything then would wait forever (and the service with it)."""
        with self._scheduling:
            if self.active_scheduler is not None and not self._scheduling_closed:
                change(self.active_scheduler)

    def close_scheduling(self) -> None:
        """Wait for a schedule change in progress; none is made after this (call before the shutdown)."""
        with self._scheduling:
            self._scheduling_closed = True

    def deliver(self) -> None:
        # One delivery pass at a time: two threads must not pick the same queued row.
        with self.delivery_lock:
            config = self.loaded.config
            sink = make_sink(slack_credentials(config.slack), config.slack, self.store)
            report = deliver_outbox(self.store, sink)
            undelivered = {**report.retry_later, **report.failed}
            if undelivered:
                self.partial["deliver"] = f"{len(undelivered)} notice(s) not delivered"
            else:
                self.partial.pop("deliver", None)
            if report.sent or report.retry_later or report.failed:
                log.info(
                    "outbox: %d delivered, %d to retry, %d failed",
                    len(report.sent),
                    len(report.retry_later),
                    len(report.failed),
                )

    def run_suites(self) -> None:
        # Each threaded result goes out as its run finishes, not when the whole queue is done.
        process_queue(self.live, self.store, self.stop, on_result=lambda _outcome: self.after_run())

    def after_run(self) -> None:
        """A run finished: the onboarding messages whose first runs are all done, then delivery."""
        from watcher.serverset.welcome import send_due_welcomes

        if self.has_repos:  # a team repository's first runs done: its onboarding message
            from watcher.repos.onboarding import send_due_onboarding
            from watcher.repos.sync import repo_states

            send_due_onboarding(self.loaded, self.store, repo_states(self.central.config, self.store))
        send_due_welcomes(self.loaded, self.store)
        self.deliver()

    def reload_config(self) -> None:
        """The central file read again when it changed; then the whole configuration put in force anew."""
        if self.keeper.read_central() and self.keeper.refresh():
            self.start_queued_work()
        if self.keeper.central_error:
            self.partial["reload_config"] = f"the changed central config is not in force: {self.keeper.central_error}"
        else:
            self.partial.pop("reload_config", None)

    def sync_repos(self) -> None:
        """Read the team repositories' files again; their servers (or last good ones) join the config."""
        from watcher.repos.onboarding import send_due_onboarding, start_onboarding
        from watcher.repos.sync import sync_repos

        result = sync_repos(self.central, self.store)
        covered = {server["name"] for state in result.new for server in state.servers}
        changes = self.keeper.refresh(result.repos, onboarding=covered)
        if start_onboarding(self.store, result.new) or changes:
            self.start_queued_work()
        send_due_onboarding(self.loaded, self.store, result.repos)
        errors = [state.git for state in result.repos if state.error]
        if errors:
            self.partial["sync_repos"] = f"{len(errors)} team repository file(s) not usable"
        else:
            self.partial.pop("sync_repos", None)
        self.deliver()

    def check_readiness(self) -> None:
        """The conformance suite polled on the calendar's cadence; new requirement sets run against every server."""
        from watcher.readiness.cycle import check_readiness

        summary = check_readiness(self.loaded, self.store, stop=self.stop)
        log.info("readiness: suite %s, %d run(s)", summary.get("suite_version"), len(summary["runs"]))
        if summary["ok"]:
            self.partial.pop("readiness", None)
        else:
            self.partial["readiness"] = str(summary.get("error"))
        self.deliver()

    def send_digest(self) -> None:
        queued = send_due_digests(self.loaded, self.store)
        log.info("digest check: %s", f"queued {', '.join(queued)}" if queued else "nothing due")
        self.deliver()

    # --- wiring --------------------------------------------------------------------------------------

    def jobs(self) -> list[Job]:
        schedule = self.loaded.config.schedule
        now = datetime.now(UTC)  # APScheduler runs on the system clock, not the service's (see watcher.core.clock)
        repos: list[Job] = []
        if self.has_repos:
            repos.append(
                (
                    "sync_repos",
                    self.sync_repos,
                    {"trigger": "interval", "minutes": schedule.repos_minutes, "next_run_time": now},
                )
            )
        return [
            *repos,
            *self.poll_jobs(now),
            (
                "poll_spec",
                self.poll_spec,
                {
                    "trigger": "interval",
                    "minutes": schedule.spec_poll_minutes,
                    "next_run_time": now + timedelta(seconds=5),
                },
            ),
            ("deliver", self.deliver, {"trigger": "interval", "seconds": schedule.deliver_seconds}),
            ("reload_config", self.reload_config, {"trigger": "interval", "seconds": schedule.config_seconds}),
            (
                "run_suites",
                self.run_suites,
                {"trigger": "interval", "seconds": 30, "next_run_time": now + timedelta(seconds=10)},
            ),
        ]

    def poll_jobs(self, now: datetime) -> list[Job]:
        budget = self.budget
        if not budget.enabled:
            return [
                (
                    "poll_sdks",
                    self.poll_sdks,
                    {"trigger": "interval", "minutes": budget.outside_minutes, "next_run_time": now},
                )
            ]
        others = tuple(s.name for s in self.loaded.config.sdks if s.name not in budget.window_sources)
        window = self.cadence()
        jobs: list[Job] = [
            (
                "poll_window_sdks",
                self.poll_window_sdks,
                {"trigger": "interval", "minutes": window.window_interval, "next_run_time": now},
            )
        ]
        if others:
            jobs.append(
                (
                    "poll_sdks",
                    lambda: self.poll_sdks(others),
                    {"trigger": "interval", "minutes": budget.outside_minutes, "next_run_time": now},
                )
            )
        return jobs

    def guarded(self, name: str, job: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            if self.stop.is_set():
                return
            try:
                job()
            except Exception as exc:  # a job's failure is logged and retried next time, never fatal
                log.exception("job %s failed", name)
                self.failed_jobs[name] = f"{type(exc).__name__}: {exc}"
                return
            self.failed_jobs.pop(name, None)
            self.last_success[name] = utcnow()
            self.first_cycle_step(name)

        return run

    def first_cycle_step(self, name: str) -> None:
        """`name` ran once; when every job of the first cycle has (and no run is queued), its display ends."""
        pending = self.first_cycle
        if pending is None:
            return
        pending.discard(name)
        if name == "run_suites" and self.store.runs(status="queued", limit=1):
            pending.add(name)
        if not pending:
            self.first_cycle = None
            progress.stop()
            log.info("first cycle done: every source polled, every queued run finished")

    def scheduler(self) -> BackgroundScheduler:
        scheduler = BackgroundScheduler(executors={"default": ThreadPoolExecutor(5)}, timezone="UTC")
        self.active_scheduler = scheduler
        for name, job, trigger in self.jobs():
            scheduler.add_job(
                self.guarded(name, job),
                id=name,
                name=name,
                max_instances=1,
                coalesce=True,
                misfire_grace_time=None,
                **trigger,
            )

        # The suite is polled like an SDK, on the calendar's cadence; not part of `run --once` (its runs are long),
        # and first a while after start, when the SDK polls have recorded the versions it runs on.
        cadence = self.cadence()
        minutes = cadence.window_interval if cadence.in_window else cadence.other_interval
        scheduler.add_job(
            self.guarded("readiness", self.check_readiness),
            id="readiness",
            name="readiness",
            trigger="interval",
            minutes=minutes,
            next_run_time=datetime.now(UTC) + timedelta(minutes=max(minutes, READINESS_FIRST_MINUTES)),
            max_instances=1,
            coalesce=True,
            misfire_grace_time=None,
        )

        # The weekly cron job; the catch-up at start follows the first spec poll (see poll_spec).
        register_digest_job(
            scheduler, self.loaded.config.digest, self.guarded("digest", self.send_digest), catch_up=False
        )
        return scheduler


def _group_name(job: str, only: tuple[str, ...] | None) -> str:
    """The name a poll log line gives its group of sources: every SDK, the beta-window group, or the rest."""
    if only is None:
        return "every SDK"
    return "the beta-window SDKs" if job == "poll_window_sdks" else "the outside-window SDKs"


async def _with_client(run: Callable[[Any], Any]) -> Any:
    async with httpx.AsyncClient(follow_redirects=True, headers={"User-Agent": "mcp-watcher"}) as client:
        return await run(client)


ONCE_OK, ONCE_JOB_FAILED, ONCE_PARTIAL = 0, 1, 3


def once_exit_code(service: Service) -> int:
    """`run --once`: 0 every job ran and every source was read and every notice delivered; 1 a job failed
    (e.g. every source failed, the state could not be written); 3 the jobs ran but some source failed or
    some notice is still undelivered."""
    for name, error in service.failed_jobs.items():
        log.error("run --once: job %s failed: %s", name, error)
    for name, what in service.partial.items():
        log.warning("run --once: %s incomplete: %s", name, what)
    if service.failed_jobs:
        return ONCE_JOB_FAILED
    return ONCE_PARTIAL if service.partial else ONCE_OK


def run_service(loaded: LoadedConfig, port: int | None = None, once: bool = False) -> int:
    """The service (or, with `once`, each job once); refused while another run holds the same state."""
    with single_instance(state_path(loaded)):
        return _run_service(loaded, port, once)


def _run_service(loaded: LoadedConfig, port: int | None, once: bool) -> int:
    credentials = slack_credentials(loaded.config.slack)  # an unreadable secret file stops the start, with its name
    destination = describe_destination(loaded.config.slack, credentials)
    (log.error if destination.degraded else log.warning if destination.sink == "console" else log.info)(
        "notices go to: %s", destination.reason
    )
    from watcher.boundary import sandbox

    boundary = sandbox.self_check(loaded.config.suites.sandbox)  # the run boundary, said once at start
    (log.info if boundary["mode"] == "bubblewrap" else log.error if not boundary["ok"] else log.warning)(
        "run boundary: %s", boundary["text"]
    )
    endpoint = loaded.config.http
    if endpoint.enabled or port is not None:
        from watcher.web.access import resolve_access

        access = resolve_access(endpoint)  # pages on a network without a token: refused before anything starts
    store = open_state(loaded)
    service = Service(loaded, store)
    service.keeper.refresh()  # what changed in the server set while the service was down (the first start: recorded)

    reaper.configure(loaded.resolve(loaded.config.suites.runs_dir) / ".process-groups")
    reaper.reap()  # children of a watcher that was killed -9
    interrupted = store.requeue_interrupted()
    if interrupted:
        log.warning("re-queued %d suite run(s) interrupted by the last stop", len(interrupted))
    if once:
        # A signal stops the job under way (its runs are cancelled, their children stopped); no job starts after.
        with (
            progress.showing("run --once", quiet=loaded.config.log.json_format),  # JSON logs: one line = one JSON
            interrupts.cooperative(service.stop, "run --once"),
        ):
            for name, job, _ in service.jobs():
                service.guarded(name, job)()
        stopped = interrupts.interrupted("run --once", "the jobs under way were stopped, the rest not run")
        return stopped if stopped is not None else once_exit_code(service)
    from watcher.suites.build import prebuild

    prebuilder = prebuild.Prebuilder(service.live, service.stop)
    prebuild.activate(prebuilder)
    service.prebuilder = prebuilder
    prebuilder.warm_tools()
    for run in store.runs(status="queued"):  # re-queued or left from the last start
        prebuilder.submit(run["server"], run["sdk_version"])
    service.first_cycle = {name for name, _, _ in service.jobs() if name not in ("deliver", "reload_config")}
    progress.start("run (first cycle)", quiet=loaded.config.log.json_format)
    scheduler = service.scheduler()
    slack = None
    if credentials.interactive:  # buttons and /mcp-watcher: Socket Mode and/or POST /slack/events
        from watcher.slackapp.connect import slack_app

        def on_slack_change() -> None:
            service.start_queued_work()
            service.deliver()

        slack = slack_app(service.live, store, credentials, on_slack_change)
    http = None
    if endpoint.enabled or port is not None:
        from watcher.web.app import page_url, web_parts
        from watcher.web.context import WebContext, known_secrets

        slowest = max(loaded.config.schedule.poll_minutes, service.budget.outside_minutes)
        readiness = Readiness(store, slowest, utcnow(), lambda: scheduler.running, destination, boundary)
        pages = WebContext(service.live, store, secrets=known_secrets(loaded, extra=(access.token or "",)))
        routes, middleware = web_parts(pages, access)
        app = build_app(readiness, [*routes, *(slack.routes() if slack else [])], middleware)
        http = HttpServer(app, endpoint.host, port if port is not None else endpoint.port)
        try:
            http.start()
        except OSError as exc:
            log.error("%s: is another process using the port? (set http.port or --port)", exc)
            service.stop.set()
            progress.stop()
            prebuild.activate(None)
            prebuilder.shutdown()
            return 2
        log.info("status page: %s", page_url(endpoint.host, http.port))

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("received %s: finishing running work, then stopping", signal.Signals(signum).name)
        service.stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    scheduler.start()
    if slack is not None:
        if credentials.signing_secret and http is None:
            log.error("Slack over HTTP needs the service's port (http.enabled): POST /slack/events is not served")
        slack.connect()
        log.info("Slack interactivity: %s", ", ".join(slack.modes))
    log.info(
        "mcp-watcher running: %d SDK source(s), %d team(s), %d server(s)",
        len(service.loaded.config.sdks),
        len(service.loaded.config.teams),
        len(service.loaded.config.servers),
    )
    service.stop.wait()
    if slack is not None:
        slack.close()
    service.close_scheduling()
    scheduler.shutdown(wait=True)
    progress.stop()
    prebuild.activate(None)
    prebuilder.shutdown()
    if http is not None:
        http.stop()
    store.close()
    log.info("stopped cleanly")
    return 0
