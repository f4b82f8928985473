"""`mcp-watcher check --server NAME --sdk-version VERSION [--json]`: one suite run by hand."""

from __future__ import annotations

import argparse
import json
import sys
import threading

from watcher.cli_support import Subparsers, config_error_exits_2, loaded_config

EXIT_CODES = {"pass": 0, "fail": 1, "error": 2}


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "check",
        help="run a server's conformance and contract suites against one SDK version",
        description="Install the server with exactly that SDK version, start it, run the conformance suite per "
        "requirement set and the contract snapshot diff, and report. Exit 0 pass, 1 fail, 2 error.",
    )
    parser.add_argument("--server", required=True, help="a server name from the config's servers")
    parser.add_argument("--sdk-version", required=True, help="the SDK version to install, e.g. 2.4.0b1")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.set_defaults(handler=check_command)


@config_error_exits_2("check")
def check_command(args: argparse.Namespace) -> int:
    from watcher.suites.notices import render
    from watcher.suites.runner import run_check

    loaded = loaded_config(args)
    loaded.config.server(args.server)
    cancel = threading.Event()
    try:
        report = run_check(loaded, args.server, args.sdk_version, cancel=cancel)
    except KeyboardInterrupt:
        cancel.set()
        print("mcp-watcher check: interrupted", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        text, _ = render(report)
        print(text)
        print(f"Artifacts: {report.get('run_dir')}")
    return EXIT_CODES.get(str(report.get("verdict")), 2)
