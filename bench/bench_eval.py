"""Benchmark: the evaluation harness's own overhead per trial, against the provider's response time.

    .venv/bin/python bench/bench_eval.py [--trials 10] [--provider anthropic|openai|both]

Runs the test notes server (two stdio copies, baseline and candidate) with the loopback provider of
the tests, and splits every trial's time into: the provider's own handling (inside the loopback
server), the provider client (the official SDK: request building, HTTP, parsing), the MCP tool calls,
and the rest — the harness's own work. Session set-up (starting both servers) is reported apart.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pytest  # noqa: E402

from tests.evaluation.helpers import API_KEY, use_variants, write_config  # noqa: E402
from tests.fakes.model_provider import FakeProvider  # noqa: E402
from watcher.evaluation.run import run_evaluation  # noqa: E402


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:7.2f} ms, mean {statistics.fmean(values) * 1000:7.2f} ms"


def bench(provider: str, trials: int) -> None:
    import anthropic  # noqa: F401  # imported before timing: a one-off cost of the process, not of a trial
    import openai  # noqa: F401

    monkeypatch = pytest.MonkeyPatch()
    with tempfile.TemporaryDirectory() as tmp, FakeProvider() as fake:
        loaded = write_config(Path(tmp), fake.base, provider=provider, trials=trials)
        use_variants(monkeypatch, "baseline", "same")
        began = time.perf_counter()
        report = run_evaluation(loaded, "notes", "2.4.0b1", environ={"EVAL_TEST_API_KEY": API_KEY})
        total = time.perf_counter() - began
    monkeypatch.undo()
    records = report["trial_records"]
    turns = sum(r["steps"] for r in records)
    trial_seconds = [r["seconds"] for r in records]
    client = [r["provider_seconds"] / r["steps"] for r in records]
    tools = [r["tool_seconds"] / r["tool_calls"] for r in records if r["tool_calls"]]
    overhead = [r["seconds"] - r["provider_seconds"] - r["tool_seconds"] for r in records]
    in_trials = sum(trial_seconds)
    print(f"{provider}: {len(records)} trials, {turns} model turns, verdict {report['verdict']}")
    print(
        f"  whole run                 {total:7.2f} s  (trials {in_trials:.2f} s; set-up and shut-down of "
        f"both servers {total - in_trials:.2f} s)"
    )
    print(f"  trial                     {ms(trial_seconds)}")
    print(f"  provider handling / turn  {ms(fake.handle_seconds)}   (the loopback provider itself)")
    print(f"  provider client / turn    {ms(client)}   (SDK + HTTP + provider handling)")
    print(f"  MCP tool call             {ms(tools)}")
    print(f"  harness overhead / trial  {ms(overhead)}   (trial − provider client − tool calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=10, help="trials per task and version")
    parser.add_argument("--provider", choices=["anthropic", "openai", "both"], default="both")
    args = parser.parse_args()
    for provider in ("anthropic", "openai") if args.provider == "both" else (args.provider,):
        bench(provider, args.trials)


if __name__ == "__main__":
    main()
