"""Which sessions a snapshot takes on which server process, and when one is taken again alone."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Sequence
from contextlib import AsyncExitStack

from watcher.contract.handshake import ClientProfile
from watcher.contract.snapshot.connection import Connection
from watcher.contract.snapshot.outcome import EraResult
from watcher.contract.snapshot.session import snapshot_era
from watcher.contract.snapshot.target import SnapshotTarget, open_transport

Job = tuple[str, int]
"""(era, index of the client profile): one session of a snapshot."""


async def take_sessions(
    target: SnapshotTarget, eras: Sequence[str], timeout: float, clients: list[ClientProfile], probe: bool
) -> dict[Job, EraResult]:
    """Every era under every profile, at once. A stdio server's start-up is most of a session's time,
    and mostly CPU, so a process per session adds up even when they run at the same time: the modern
    era's sessions, stateless requests that each carry the profile's client capabilities, share one
    process. Each legacy session has a process of its own: its server keeps the client's capabilities
    from the `initialize` (a server may register tools then, and never drop them), and a connection
    serves one era (the SDK's servers refuse an `initialize` after modern requests). HTTP sessions cost
    no process: each runs on its own connection."""
    jobs = [(era, index) for era in eras for index in range(len(clients))]
    lanes: list[list[Job]] = [[job] for job in jobs]
    if target.command and len(clients) > 1 and "modern" in eras:
        shared = [job for job in jobs if job[0] == "modern"]
        lanes = [shared] + [[job] for job in jobs if job not in shared]
    taken = await asyncio.gather(*(_run_lane(target, lane, timeout, clients, probe) for lane in lanes))
    return {job: result for lane in taken for job, result in lane.items()}


async def _run_lane(
    target: SnapshotTarget, jobs: list[Job], timeout: float, clients: list[ClientProfile], probe: bool
) -> dict[Job, EraResult]:
    """`jobs` in turn on one server process; a session that the earlier ones may have spoiled is taken
    again on a process of its own, so that every result is what a new process would have given."""

    async def fresh(job: Job, connection: Connection | None = None) -> EraResult:
        era, index = job
        return await snapshot_era(target, era, timeout, clients[index], probe and index == 0, connection)

    if len(jobs) == 1:
        return {jobs[0]: await fresh(jobs[0])}
    results: dict[Job, EraResult] = {}
    with (
        tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog,
        contextlib.suppress(Exception),  # boundary: where the process will not start, each job fails on its own
    ):
        async with AsyncExitStack() as stack:
            streams = await stack.enter_async_context(await open_transport(target, stack, timeout, errlog))
            for turn, job in enumerate(jobs):
                result = await fresh(job, Connection(streams, errlog, turn))
                if turn and not _as_if_alone(
                    result, next((r for (era, _), r in results.items() if era == job[0]), None)
                ):
                    break
                results[job] = result
                if result.status.startswith("error"):
                    break  # the process may be gone or wedged
    rest = [job for job in jobs if job not in results]
    results.update(zip(rest, await asyncio.gather(*(fresh(job) for job in rest)), strict=True))
    return results


def _as_if_alone(result: EraResult, first: EraResult | None) -> bool:
    """Whether a result from a process that served other sessions first stands for a new process's: a
    complete one does; a refusal only where the same era's first session met the same one."""
    if result.status == "ok":
        return True
    return first is not None and result.status.startswith("unsupported") and result.status == first.status
