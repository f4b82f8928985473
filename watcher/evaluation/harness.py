"""The agent loop: one task, one server version, one model — and the paired run of every task on two versions.

A trial lists nothing itself: the server's tools are listed once per session through the `mcp`
client and offered to the model; every tool call the model makes is executed against the server;
the trial stops at a final answer or at the step limit. Trials of the two versions alternate (task,
trial k, baseline then candidate), so a run cut short by the budget or a failure still leaves
complete pairs behind.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client import Transport
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from watcher.boundary.stdio import StdoutLineTooLong, stdio_transport
from watcher.evaluation.providers import Provider, ProviderError, ToolCall, ToolOutcome, ToolSpec
from watcher.evaluation.report import NotMeasured, TrialRecord
from watcher.evaluation.settings import EvaluationBudget
from watcher.evaluation.tasks import Task

SIDES = ("baseline", "candidate")
MAX_PAGES = 100
ANSWER_CLIP = 300
_TRANSPORT_FAILURES = frozenset({types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT})


@dataclass(frozen=True)
class ServerTarget:
    """One running version of the server: a streamable HTTP URL, or a stdio command the boundary starts."""

    version: str
    url: str | None = None
    command: list[str] | None = None
    env: dict[str, str] | None = None
    """The stdio child's whole environment (scrubbed by the caller: no secret of ours)."""
    cwd: str | None = None


@dataclass
class TrialResult:
    task: str
    side: str
    index: int
    outcome: str = "error"
    """success | failure | error (not measured: the trial did not finish)."""
    why: str = ""
    tool_calls: int = 0
    tools: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    tool_errors: int = 0
    steps: int = 0
    seconds: float = 0.0
    provider_seconds: float = 0.0
    tool_seconds: float = 0.0
    answer: str = ""

    @property
    def measured(self) -> bool:
        return self.outcome in ("success", "failure")

    def as_dict(self) -> TrialRecord:
        return {
            "task": self.task,
            "side": self.side,
            "index": self.index,
            "outcome": self.outcome,
            "why": self.why,
            "tool_calls": self.tool_calls,
            "tools": list(self.tools),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "tool_errors": self.tool_errors,
            "steps": self.steps,
            "seconds": self.seconds,
            "provider_seconds": self.provider_seconds,
            "tool_seconds": self.tool_seconds,
            "answer": self.answer,
        }


class TrialStopped(Exception):
    """A trial that could not finish; `kind`: a provider error kind, server_gone or cancelled."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.trial: TrialResult | None = None
        """What the trial got to before it stopped (tokens spent, calls made)."""


@dataclass
class PairedRun:
    trials: list[TrialResult] = field(default_factory=list)
    tools: dict[str, list[str]] = field(default_factory=dict)
    stopped: str | None = None
    """Why the run ended early (budget, rate limit, provider error, a server that died); None: complete."""
    stop_kind: str | None = None
    not_measured: list[NotMeasured] = field(default_factory=list)


# --- the server side ---------------------------------------------------------------------------------


@asynccontextmanager
async def connect(target: ServerTarget, timeout: float) -> AsyncIterator[Client]:
    """An MCP session with the server; the client's response cache is off (every listing is real). A stdio
    server is started by the boundary (its stderr goes where the watcher's goes) and ended when the session is."""
    server: str | Transport
    if target.url:
        server = target.url
    elif target.command:
        server = stdio_transport(target.command, env=target.env, cwd=target.cwd, errlog=None)
    else:
        raise ValueError("a server target needs a url or a command")
    async with Client(server, mode="auto", cache=None, read_timeout_seconds=timeout) as client:
        yield client


async def list_tools(client: Client) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        specs += [ToolSpec(t.name, t.description or "", dict(t.input_schema)) for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            break
    return specs


def _result_text(result: types.CallToolResult) -> str:
    parts = [c.text if isinstance(c, types.TextContent) else f"[{c.type} content]" for c in result.content]
    if not parts and result.structured_content is not None:
        parts.append(str(result.structured_content))
    return "\n".join(parts)


async def call_tool(client: Client, call: ToolCall, timeout: float) -> ToolOutcome:
    """Run one call; a tool or JSON-RPC error is an outcome for the model, a dead server is TrialStopped."""
    if call.bad_arguments:
        return ToolOutcome(call.id, call.bad_arguments, True)
    try:
        with anyio.fail_after(timeout):
            result = await client.call_tool(call.name, call.arguments)
    except MCPError as exc:
        if exc.code in _TRANSPORT_FAILURES:
            raise TrialStopped("server_gone", f"the server stopped answering during {call.name}: {exc}") from None
        return ToolOutcome(call.id, f"error {exc.code}: {exc}", True)
    except ValidationError as exc:  # a result that does not conform to the protocol
        return ToolOutcome(call.id, f"invalid result: {exc.error_count()} error(s)", True)
    except (TimeoutError, anyio.ClosedResourceError, anyio.BrokenResourceError, httpx2.HTTPError, OSError) as exc:
        raise TrialStopped(
            "server_gone", f"the server stopped answering during {call.name}: {type(exc).__name__} {exc}"
        ) from None
    return ToolOutcome(call.id, _result_text(result), bool(result.is_error))


# --- one trial -------------------------------------------------------------------------------------------


def _arguments_match(wanted: Mapping[str, object], given: Mapping[str, object]) -> bool:
    """Every wanted argument is given with exactly its value (the task's JSON against the model's)."""
    return all(key in given and given[key] == value for key, value in wanted.items())


def judge(task: Task, calls: Sequence[ToolCall], answer: str | None) -> tuple[bool, str]:
    expect = task.expect
    names = [c.name for c in calls]
    if expect.no_tool:
        return (not calls, "" if not calls else f"called {', '.join(names)} where no tool was needed")
    if expect.tool:
        if any(c.name == expect.tool and _arguments_match(expect.args, c.arguments) for c in calls):
            return True, ""
        if expect.tool in names:
            return False, f"called {expect.tool} without the arguments {expect.args}"
        return False, f"did not call {expect.tool}" + (f" (called {', '.join(names)})" if names else " (no tool call)")
    assert expect.answer_matches is not None
    if answer is None:
        return False, "no final answer"
    if re.search(expect.answer_matches, answer):
        return True, ""
    return False, f"the answer does not match /{expect.answer_matches}/"


async def run_trial(
    client: Client,
    tools: list[ToolSpec],
    provider: Provider,
    task: Task,
    *,
    side: str,
    index: int,
    max_steps: int,
    timeout: float,
) -> TrialResult:
    """One conversation; raises TrialStopped (with the partial record in `.trial`) when it cannot finish."""
    trial = TrialResult(task=task.id, side=side, index=index)
    started = time.monotonic()
    conversation = provider.conversation(task.prompt, tools)
    calls: list[ToolCall] = []
    answer: str | None = None
    try:
        for _ in range(max_steps):
            trial.steps += 1
            asked = time.monotonic()
            try:
                turn = await conversation.next_turn()
            except ProviderError as exc:
                raise TrialStopped(exc.kind, str(exc)) from None
            finally:
                trial.provider_seconds += time.monotonic() - asked
            trial.input_tokens += turn.input_tokens
            trial.output_tokens += turn.output_tokens
            if not turn.calls:
                answer = turn.text
                break
            outcomes = []
            for call in turn.calls:
                calls.append(call)
                began = time.monotonic()
                try:
                    outcome = await call_tool(client, call, timeout)
                finally:
                    trial.tool_seconds += time.monotonic() - began
                trial.tool_errors += int(outcome.is_error)
                outcomes.append(outcome)
            conversation.add_tool_outcomes(outcomes)
    except TrialStopped as stop:
        trial.why = str(stop)
        _finish(trial, calls, started)
        stop.trial = trial
        raise
    ok, why = judge(task, calls, answer)
    if answer is None and not ok:
        why = f"{why}; no final answer within {max_steps} steps"
    trial.outcome, trial.why = ("success" if ok else "failure"), why
    trial.answer = (answer or "")[:ANSWER_CLIP]
    _finish(trial, calls, started)
    return trial


def _finish(trial: TrialResult, calls: list[ToolCall], started: float) -> None:
    trial.tool_calls = len(calls)
    trial.tools = [c.name for c in calls]
    trial.seconds = time.monotonic() - started


# --- the paired run -----------------------------------------------------------------------------------


def _over_budget(budget: EvaluationBudget, trials_run: int, tokens: int) -> str | None:
    if budget.max_trials is not None and trials_run + 2 > budget.max_trials:
        return f"budget exhausted: max_trials {budget.max_trials} reached ({trials_run} trials run)"
    if budget.max_tokens is not None and tokens >= budget.max_tokens:
        return f"budget exhausted: max_tokens {budget.max_tokens} spent ({tokens} tokens)"
    return None


async def run_pairs(
    tasks: Sequence[Task],
    targets: dict[str, ServerTarget],
    provider: Provider,
    *,
    trials: int,
    max_steps: int,
    timeout: float,
    budget: EvaluationBudget,
    cancel: threading.Event | None = None,
) -> PairedRun:
    """Every task K times on both versions, alternating; stops early (and says why) rather than fail."""
    run = PairedRun()
    plan = [(task, k) for task in tasks for k in range(trials)]
    done = 0
    try:
        async with AsyncExitStack() as stack:
            clients: dict[str, Client] = {}
            tools: dict[str, list[ToolSpec]] = {}
            for side in SIDES:
                try:
                    clients[side] = await stack.enter_async_context(connect(targets[side], timeout))
                    tools[side] = await list_tools(clients[side])
                except Exception as exc:  # the server under this version cannot be talked to: nothing measured
                    run.stopped = f"the {side} server ({targets[side].version}) could not be reached: {_why(exc)}"
                    run.stop_kind = "server_gone"
                    break
                run.tools[side] = [t.name for t in tools[side]]
            while run.stopped is None and done < len(plan):
                if cancel is not None and cancel.is_set():
                    run.stopped, run.stop_kind = "cancelled", "cancelled"
                    break
                tokens = sum(t.input_tokens + t.output_tokens for t in run.trials)
                reason = _over_budget(budget, len(run.trials), tokens)
                if reason:
                    run.stopped, run.stop_kind = reason, "budget"
                    break
                task, k = plan[done]
                for side in SIDES:
                    try:
                        result = await run_trial(
                            clients[side],
                            tools[side],
                            provider,
                            task,
                            side=side,
                            index=k,
                            max_steps=max_steps,
                            timeout=timeout,
                        )
                    except TrialStopped as stop:
                        if stop.trial is not None:
                            run.trials.append(stop.trial)
                        run.stopped, run.stop_kind = f"{side} {task.id} trial {k + 1}: {stop}", stop.kind
                        break
                    run.trials.append(result)
                else:
                    done += 1
    except* StdoutLineTooLong as ended:  # raised by a stdio server's transport, ending the session under way
        run.stopped, run.stop_kind = f"a server was ended: {ended.exceptions[0]}", "server_gone"
    run.not_measured = _not_measured(plan[done:], trials, run.stopped or "")
    return run


def _why(exc: BaseException) -> str:
    """An exception's text; a task group's is its leaves' (a stdio transport's StdoutLineTooLong among them)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(dict.fromkeys(_why(inner) for inner in exc.exceptions))
    return str(exc)


def _not_measured(rest: Sequence[tuple[Task, int]], trials: int, reason: str) -> list[NotMeasured]:
    by_task: dict[str, list[int]] = {}
    for task, k in rest:
        by_task.setdefault(task.id, []).append(k + 1)
    return [{"task": t, "trials": ks, "of": trials, "reason": reason} for t, ks in by_task.items()]
