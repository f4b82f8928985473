"""A release's path through the capabilities: the runs it queues (`suites.worker`), each drained by the suite
worker, and what follows a finished run: the model evaluation when its contract diff affects models
(`evaluation.trigger`), its reply threaded under the run's result. It sits above `watcher.suites` and
`watcher.evaluation`, so neither imports the other; the service and `poll --suites` drain the queue here. The
one poll cycle (poll → queue → deliver) that `mcp-watcher poll` and the service's poll jobs both run is here too."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass

from watcher.config import LoadedConfig
from watcher.core.run_report import RunReport
from watcher.core.store import Store
from watcher.evaluation.notices import evaluation_notice
from watcher.evaluation.trigger import after_suite_run
from watcher.live import ConfigSource
from watcher.notify.delivery import DeliveryReport
from watcher.polling.poll import PollResult, poll_all
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


@dataclass(frozen=True)
class PollCycle:
    """What one poll cycle did: the poll's result, the runs it queued, and the delivery (None: none was made)."""

    result: PollResult
    queued: list[str]
    delivered: DeliveryReport | None


def poll_cycle(
    polled: LoadedConfig,
    store: Store,
    deliver: Callable[[], DeliveryReport | None] | None,
    *,
    queue_with: LoadedConfig | None = None,
    stop: threading.Event | None = None,
    after_queue: Callable[[PollResult, list[str]], None] | None = None,
) -> PollCycle:
    """Poll every SDK source of `polled`, queue the suite runs its news calls for (by the servers of
    `queue_with`, by default `polled`), hand both to `after_queue` (which may raise: then nothing is
    delivered), then `deliver` the outbox (None: leave it queued)."""
    result = asyncio.run(poll_all(polled, store, stop=stop))
    queued = queue_after_poll(queue_with or polled, store, result.new, result.baseline_newest)
    if after_queue is not None:
        after_queue(result, queued)
    return PollCycle(result, queued, deliver() if deliver is not None else None)


__all__ = [
    "FOLLOWERS",
    "PollCycle",
    "evaluation_follower",
    "poll_cycle",
    "process_queue",
    "queue_after_poll",
    "queue_for_release",
]
