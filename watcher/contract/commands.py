"""CLI: `mcp-watcher snapshot …` and `mcp-watcher diff …`; watcher/cli.py calls `register()` to add them."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from watcher.cli_support import Subparsers
from watcher.contract.credentials import (
    PROFILE_ENV_PREFIX,
    UsageError,
    env_from_names,
    parse_env_assignments,
    parse_headers,
    read_profile,
)
from watcher.contract.diff import SnapshotError, diff_snapshots
from watcher.contract.report import FORMATS, LEVELS, fails, render
from watcher.contract.snapshot import ERA_CHOICES, SnapshotTarget, take_snapshot_sync

__all__ = ["PROFILE_ENV_PREFIX", "UsageError", "build_target", "register", "run_diff", "run_snapshot"]


def register(subparsers: Subparsers) -> None:
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
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="variable for a stdio server (repeatable); the value shows on this command line: "
        "prefer --env-from or a profile for secrets",
    )
    snapshot.add_argument(
        "--env-from",
        action="append",
        default=[],
        metavar="NAME",
        help="pass the variable NAME from this environment to a stdio server (repeatable)",
    )
    snapshot.add_argument(
        "--profile",
        metavar="NAME",
        help=f"credentials profile from the environment variable {PROFILE_ENV_PREFIX}NAME, one item per line: "
        "'Name: value' (HTTP header) or 'env NAME=value' / 'env NAME' (stdio server variable); "
        "recorded by name in snapshot.json, its values never",
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


def build_target(args: argparse.Namespace, environ: Mapping[str, str]) -> SnapshotTarget:
    """The target from the command line; every usage error is raised here, before any server starts."""
    command = list(args.server_command or [])
    if command and command[0] == "--":
        command = command[1:]
    if bool(args.url) == bool(command):
        raise UsageError("give exactly one target: --url URL, or -- COMMAND ARGS… for a stdio server")
    headers = parse_headers(args.header)
    env_given = parse_env_assignments(args.env)
    env_passed = env_from_names(args.env_from, environ)
    twice = sorted(set(env_given) & set(env_passed))
    if twice:
        raise UsageError(f"{', '.join(twice)}: given by both --env and --env-from; give each variable once")
    env = {**env_given, **env_passed}
    if args.profile:
        profile = read_profile(args.profile, environ)
        if profile.headers and not args.url:
            raise UsageError(
                f"profile {args.profile!r} ({profile.variable}) has HTTP headers, which apply to --url targets only"
            )
        if profile.env and args.url:
            raise UsageError(
                f"profile {args.profile!r} ({profile.variable}) has 'env' lines, which apply to stdio servers only"
            )
        headers = {**profile.headers, **headers}
        env = {**profile.env, **env}
    if args.header and not args.url:
        raise UsageError("--header applies to --url (streamable HTTP) targets only")
    if env and args.url:
        raise UsageError("--env and --env-from apply to stdio servers (-- COMMAND ARGS…) only")
    return SnapshotTarget(
        url=args.url,
        command=command or None,
        cwd=args.cwd,
        headers=headers or None,
        env=env or None,
        private_env=frozenset(env),
    )
