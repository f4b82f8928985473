"""A release's path through the capabilities: the runs it queues (`suites.worker`), each drained by the suite
worker, and what follows a finished run: the model evaluation when its contract diff affects models
(`evaluation.trigger`), its reply threaded under the run's result. It sits above `watcher.suites` and
`watcher.evaluation`, so neither imports the other; the service and `poll --suites` drain the queue here."""

from __future__ import annotations

import threading
from collections.abc import Callable

from watcher.config import LoadedConfig
from watcher.core.run_report import RunReport
from watcher.core.store import Store
from watcher.evaluation.notices import evaluation_notice
from watcher.evaluation.trigger import after_suite_run
from watcher.live import ConfigSource
from watcher.suites.executors.fanout import Limits
from watcher.suites.worker import Followed, Follower, RunOutcome, queue_after_poll, queue_for_release
from watcher.suites.worker import process_queue as drain_queue


def evaluation_follower(loaded: LoadedConfig, report: RunReport, stop: threading.Event | None) -> Followed | None:
    """The evaluation a finished run calls for (it notes in the report why none ran); None when none ran."""
    evaluation = after_suite_run(loaded, report, stop)
    if evaluation is None:
        return None
    return Followed(
        "evaluation", evaluation["verdict"], lambda threaded: evaluation_notice(loaded, evaluation, threaded=threaded)
    )


FOLLOWERS: tuple[Follower, ...] = (evaluation_follower,)
"""What follows every finished suite run, in order."""


def process_queue(
    source: ConfigSource,
    store: Store,
    stop: threading.Event | None = None,
    on_result: Callable[[RunOutcome], None] | None = None,
    *,
    fanout_limits: Limits | None = None,
) -> list[RunOutcome]:
    """`suites.worker.process_queue` with the followers above: each outcome carries `evaluation` (its verdict)
    and `evaluation_notice` (the reply's outbox key) when an evaluation ran."""
    return drain_queue(source, store, stop, on_result, fanout_limits=fanout_limits, followers=FOLLOWERS)


__all__ = ["FOLLOWERS", "evaluation_follower", "process_queue", "queue_after_poll", "queue_for_release"]
