"""`mcp-watcher eval --server NAME --sdk-version V [--baseline-version B] [--trials K] [--tasks FILE] [--json]`."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from watcher.cli_support import in_force
from watcher.core import interrupts, progress
from watcher.core.errors import ConfigError, StateError

EXIT_CODES = {"no_regression": 0, "regression": 1, "error": 2}
PUBLIC_KEYS = (
    "server",
    "baseline_version",
    "candidate_version",
    "provider",
    "model",
    "trials",
    "verdict",
    "error",
    "partial",
    "stopped",
    "not_measured",
    "regressed_tasks",
    "regressions",
    "tasks",
    "totals",
    "tools",
    "tasks_file",
    "run_dir",
    "started_at",
    "seconds",
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="paired model evaluation of a server on its baseline SDK version and another one",
        description="Run the server's evaluation tasks with its configured model against the baseline SDK version "
        "and VERSION (each in its own environment), compare them pair by pair, and report. Exit 0 no regression, "
        "1 regression, 2 error or incomplete, 130 interrupted (SIGINT), 143 terminated (SIGTERM).",
    )
    parser.add_argument("--server", required=True, help="a server name from the config's servers")
    parser.add_argument("--sdk-version", required=True, help="the candidate SDK version, e.g. 2.4.0b1")
    parser.add_argument("--baseline-version", default=None, help="default: the server's baseline_sdk_version")
    parser.add_argument("--trials", type=int, default=None, help="trials per task and version (default: config, 5)")
    parser.add_argument("--tasks", default=None, help="a task file instead of the configured one")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=eval_command)


def eval_command(args: argparse.Namespace) -> int:
    if args.trials is not None and args.trials < 1:
        print("mcp-watcher eval: --trials must be at least 1", file=sys.stderr)
        return 2
    from watcher.config import load_config, open_state
    from watcher.core.text import shown
    from watcher.evaluation.notices import render
    from watcher.evaluation.run import run_evaluation
    from watcher.notify.blocks import for_console
    from watcher.suites.preflight import known_spelling

    try:
        loaded = load_config(getattr(args, "config", None))
        try:
            store = open_state(loaded)
        except StateError:  # no state yet: the central file's servers, the versions as typed
            loaded.config.server(args.server)
        else:
            try:  # a team repository's server, as the last good sync recorded it; versions in the polls' spelling
                loaded = in_force(loaded, store)
                server = loaded.config.server(args.server)
                args.sdk_version = known_spelling(loaded, store, server, args.sdk_version)
                if args.baseline_version:
                    args.baseline_version = known_spelling(loaded, store, server, args.baseline_version)
            finally:
                store.close()
    except ConfigError as exc:
        print(f"mcp-watcher eval: {exc}", file=sys.stderr)
        return 2
    cancel = threading.Event()
    try:
        with progress.showing("eval", quiet=args.json), interrupts.cooperative(cancel, "eval"):
            report = run_evaluation(
                loaded,
                args.server,
                args.sdk_version,
                baseline_version=args.baseline_version,
                trials=args.trials,
                tasks_path=args.tasks,
                cancel=cancel,
            )
    except KeyboardInterrupt:  # called from a thread that could not install the handlers
        cancel.set()
        print("mcp-watcher eval: interrupted", file=sys.stderr)
        return interrupts.exit_code(signal.SIGINT)
    code = interrupts.interrupted("eval", "the evaluation was stopped before its verdict")
    if code is not None:
        return code
    if args.json:
        print(json.dumps({k: report.get(k) for k in PUBLIC_KEYS}, indent=2, default=str))
    else:
        text, _ = render(report)
        print(for_console(text))
        print(shown(f"Artifacts: {report.get('run_dir')}"))
    return EXIT_CODES.get(str(report.get("verdict")), 2)
