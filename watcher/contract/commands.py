"""CLI: `mcp-watcher snapshot …` and `mcp-watcher diff …`. The lead's cli.py calls `register()`."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from watcher.contract.diff import SnapshotError, diff_snapshots
from watcher.contract.report import FORMATS, LEVELS, fails, render
from watcher.contract.snapshot import ERA_CHOICES, SnapshotTarget, take_snapshot_sync
from watcher.errors import WatcherError

PROFILE_ENV_PREFIX = "MCP_WATCHER_PROFILE_"
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


class UsageError(WatcherError):
    """Bad command-line input, phrased for the person who typed it."""


def register(subparsers: Any) -> None:
    snapshot = subparsers.add_parser(
        "snapshot",
        help="write a normalized contract snapshot of an MCP server",
        description="Connect with the mcp client (streamable HTTP with --url, stdio with -- COMMAND ARGS…) and "
        "write tools.json, resources.json, resource-templates.json, prompts.json, server.json and errors.json "
        "(per era: DIR/legacy and DIR/modern with --era both).",
    )
    snapshot.add_argument("--url", help="streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp")
    snapshot.add_argument("--out", required=True, type=Path, metavar="DIR", help="snapshot directory to write")
    snapshot.add_argument("--era", choices=ERA_CHOICES, default="both", help="protocol era(s) (default: both)")
    snapshot.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'Name: value'",
        help="HTTP header to send (repeatable), e.g. an authorization profile's token",
    )
    snapshot.add_argument(
        "--profile",
        metavar="NAME",
        help=f"auth profile: headers from the environment variable {PROFILE_ENV_PREFIX}NAME "
        "(one 'Name: value' per line); recorded by name in snapshot.json",
    )
    snapshot.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS", help="per era (default 60)")
    snapshot.add_argument("--cwd", help="working directory of a stdio server")
    snapshot.add_argument(
        "server_command", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS", help="stdio server command, after --"
    )
    snapshot.set_defaults(handler=run_snapshot)

    diff = subparsers.add_parser(
        "diff",
        help="compare two contract snapshots and classify every change",
        description="Exit 0: nothing at the --fail-on level; 1: something at or above it; 2: unusable input.",
    )
    diff.add_argument("baseline", type=Path, help="baseline snapshot directory")
    diff.add_argument("candidate", type=Path, help="candidate snapshot directory")
    diff.add_argument("--format", choices=FORMATS, default="json")
    diff.add_argument(
        "--fail-on",
        choices=LEVELS,
        default="clients",
        help="clients (default): fail on changes that break clients; models: also on changes that "
        "affect models; none: never fail",
    )
    diff.set_defaults(handler=run_diff)


def run_diff(args: argparse.Namespace) -> int:
    try:
        report = diff_snapshots(args.baseline, args.candidate)
    except SnapshotError as exc:
        print(f"mcp-watcher diff: unusable input: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render(report, args.format, fail_on=args.fail_on))
    return 1 if fails(report, args.fail_on) else 0


def run_snapshot(args: argparse.Namespace) -> int:
    try:
        target = build_target(args, os.environ)
    except UsageError as exc:
        print(f"mcp-watcher snapshot: {exc}", file=sys.stderr)
        return 2
    summary = take_snapshot_sync(target, args.out, era=args.era, timeout=args.timeout, profile=args.profile)
    any_ok = False
    for era, result in summary["eras"].items():
        counts = ", ".join(f"{name} {count}" for name, count in result["counts"].items())
        version = f", protocol {result['protocolVersion']}" if result.get("protocolVersion") else ""
        print(f"{era}: {result['status']}" + (f" ({counts}{version})" if counts else ""))
        any_ok = any_ok or result["status"] == "ok"
    print(f"snapshot written to {args.out}")
    return 0 if any_ok else 1


def build_target(args: argparse.Namespace, environ: Any) -> SnapshotTarget:
    command = list(args.server_command or [])
    if command and command[0] == "--":
        command = command[1:]
    if bool(args.url) == bool(command):
        raise UsageError("give exactly one target: --url URL, or -- COMMAND ARGS… for a stdio server")
    headers = parse_headers(args.header)
    if args.profile:
        headers = {**profile_headers(args.profile, environ), **headers}
    if headers and not args.url:
        raise UsageError("--header and --profile apply to --url (streamable HTTP) targets only")
    return SnapshotTarget(url=args.url, command=command or None, cwd=args.cwd, headers=headers or None)


def parse_headers(values: list[str], source: str = "--header") -> dict[str, str]:
    headers: dict[str, str] = {}
    for index, raw in enumerate(values, 1):
        name, sep, value = raw.partition(":")
        name = name.strip()
        if not sep or not _TOKEN.match(name):
            # Never echo the input: without a colon, the whole of it may be the token.
            raise UsageError(f"{source} #{index}: expected 'Name: value' with an HTTP token as the name")
        headers[name] = value.strip()
    return headers


def profile_headers(profile: str, environ: Any) -> dict[str, str]:
    variable = PROFILE_ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", profile).upper()
    raw = environ.get(variable)
    if raw is None:
        raise UsageError(f"profile {profile!r}: set {variable} to its headers, one 'Name: value' per line")
    lines = [line for line in raw.splitlines() if line.strip()]
    return parse_headers(lines, source=variable + " line")
