"""`mcp-watcher check --server NAME --sdk-version VERSION [--json]`: one suite run by hand."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from typing import TYPE_CHECKING

from watcher.cli_support import Subparsers, config_and_state, config_error_exits_2
from watcher.core import interrupts, progress

if TYPE_CHECKING:
    from watcher.config import LoadedConfig
    from watcher.core.store import Store

EXIT_CODES = {"pass": 0, "fail": 1, "error": 2}


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "check",
        help="run a server's conformance and contract suites against one SDK version",
        description="Install the server with exactly that SDK version, start it, run the conformance suite per "
        "requirement set and the contract snapshot diff, and report; the run is recorded (trigger cli: in "
        "`status`, on the status page). Exit 0 pass, 1 fail, 2 error or a mistake in the request (an unknown "
        "server, a server path that is not there, a version the registry does not have), 130 interrupted "
        "(SIGINT), 143 terminated (SIGTERM).",
    )
    parser.add_argument("--server", required=True, help="a server name from the config's servers")
    parser.add_argument("--sdk-version", required=True, help="the SDK version to install, e.g. 2.4.0b1")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.set_defaults(handler=check_command)


@config_error_exits_2("check")
def check_command(args: argparse.Namespace) -> int:
    from watcher.suites.preflight import Mistake, checked_request

    with config_and_state(args) as (loaded, store):
        try:
            version, warnings = checked_request(loaded, store, args.server, args.sdk_version)
        except Mistake as exc:  # before anything is installed
            print(f"mcp-watcher check: {exc}", file=sys.stderr)
            return 2
        if version != args.sdk_version:
            print(
                f"mcp-watcher check: {args.sdk_version} is {version} on the registry: running {version}",
                file=sys.stderr,
            )
            args.sdk_version = version
        for warning in warnings:
            print(f"mcp-watcher check: warning: {warning}", file=sys.stderr)
        return _check(args, loaded, store)


def _check(args: argparse.Namespace, loaded: LoadedConfig, store: Store) -> int:
    from watcher.notify.blocks import for_console
    from watcher.suites.notices import render
    from watcher.suites.runner import run_check

    cancel = threading.Event()
    try:
        with progress.showing("check", quiet=args.json), interrupts.cooperative(cancel, "check"):
            report = run_check(loaded, args.server, args.sdk_version, cancel=cancel)
    except KeyboardInterrupt:  # called from a thread that could not install the handlers
        cancel.set()
        print("mcp-watcher check: interrupted", file=sys.stderr)
        return interrupts.exit_code(signal.SIGINT)
    code = interrupts.interrupted("check", "the run was stopped before its verdict; nothing was recorded")
    if code is not None:
        return code
    server = loaded.config.server(args.server)
    report["trigger"] = "cli"
    report["stored_run_id"] = store.record_run(server.name, server.sdk, args.sdk_version, "cli", report)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        text, _ = render(report)
        print(for_console(text))
        print(f"Artifacts: {report.get('run_dir')}")
        print(f"Recorded as run #{report['stored_run_id']} (`mcp-watcher status`; /runs/{report['stored_run_id']})")
    return EXIT_CODES.get(str(report.get("verdict")), 2)
