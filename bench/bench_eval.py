"""Benchmark: the evaluation harness's own overhead per trial, against the provider's response time.

    .venv/bin/python bench/bench_eval.py [--trials 10] [--provider anthropic|openai|both] [--quick]

Runs the example server examples/library (two stdio copies from this environment, baseline and candidate,
with its own eval-tasks.yaml) with the loopback provider (bench/fakes/model_provider.py), and splits every
trial's time into: the provider's own handling (inside the loopback server), the provider client (the
official SDK: request building, HTTP, parsing), the MCP tool calls, and the rest — the harness's own work.
Session set-up (starting both servers) is reported apart.
--quick: one trial per task, Anthropic's API only (the smoke test's mode).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fakes.model_provider import FakeProvider  # noqa: E402
from watcher.config import LoadedConfig, load_config  # noqa: E402
from watcher.evaluation import run as eval_run  # noqa: E402
from watcher.evaluation.harness import ServerTarget  # noqa: E402
from watcher.evaluation.run import run_evaluation  # noqa: E402
from watcher.suites.settings import Server  # noqa: E402

LIBRARY = ROOT / "examples" / "library"
API_KEY = "sk-bench-never-in-a-server"


def write_config(folder: Path, api_url: str, provider: str, trials: int) -> LoadedConfig:
    """The library server alone, its evaluation set run against the loopback provider."""
    block = {
        "tasks": str(LIBRARY / "eval-tasks.yaml"),
        "provider": provider,
        "model": "fake-model-1",
        "api_key_env": "EVAL_BENCH_API_KEY",
        "api_url": api_url if provider == "anthropic" else f"{api_url}/v1",
        "trials": trials,
        "max_steps": 4,
        "max_retries": 2,
        "timeout_seconds": 20,
    }
    data = {
        "state": str(folder / "state" / "watcher.db"),
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
        "servers": [
            {
                "name": "library",
                "team": "books",
                "sdk": "python",
                "language": "python",
                "path": str(LIBRARY),
                "transport": "stdio",
                "start": ["python", "-m", "library_server"],
                "baseline_sdk_version": "2.3.0",
                "requirements": [],
                "evaluation": block,
            }
        ],
        "suites": {"runs_dir": str(folder / "runs"), "envs_dir": str(folder / "envs")},
    }
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_config(path, base_dir=ROOT)


@contextlib.contextmanager
def sides_from_this_environment() -> Iterator[None]:
    """Both versions are the library server of this environment: no SDK install is measured (the
    evaluation's documented seam, `run.prepare_sides`, swapped for the length of the block)."""

    @contextlib.contextmanager
    def prepared(
        loaded: LoadedConfig, server: Server, versions: Mapping[str, str], log_dir: Path, cancel: threading.Event | None
    ) -> Iterator[dict[str, ServerTarget]]:
        command = [sys.executable, "-m", "library_server"]
        yield {
            side: eval_run.stdio_target(loaded, server, versions[side], command, str(LIBRARY), [])
            for side in ("baseline", "candidate")
        }

    original = eval_run.prepare_sides
    eval_run.prepare_sides = prepared
    try:
        yield
    finally:
        eval_run.prepare_sides = original


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:7.2f} ms, mean {statistics.fmean(values) * 1000:7.2f} ms"


def bench(provider: str, trials: int) -> None:
    import anthropic  # noqa: F401  # imported before timing: a one-off cost of the process, not of a trial
    import openai  # noqa: F401

    with tempfile.TemporaryDirectory() as tmp, FakeProvider() as fake, sides_from_this_environment():
        loaded = write_config(Path(tmp), fake.base, provider=provider, trials=trials)
        began = time.perf_counter()
        report = run_evaluation(loaded, "library", "2.4.0b1", environ={"EVAL_BENCH_API_KEY": API_KEY})
        total = time.perf_counter() - began
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
    parser.add_argument("--quick", action="store_true", help="one trial per task, anthropic only: a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.trials, args.provider = 1, "anthropic"
    for provider in ("anthropic", "openai") if args.provider == "both" else (args.provider,):
        bench(provider, args.trials)


if __name__ == "__main__":
    main()
