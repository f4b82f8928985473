"""CLI: `mcp-watcher snapshot …` and `mcp-watcher diff …`; watcher/cli.py calls `register()` to add them."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from watcher.cli_support import Subparsers, iso_date
from watcher.contract.credentials import (
    PROFILE_ENV_PREFIX,
    UsageError,
    env_from_names,
    parse_env_assignments,
    parse_headers,
    read_profile,
)
from watcher.contract.normalize import ERA_CHOICES
from watcher.contract.report import FORMATS, LEVELS
from watcher.core import progress, vault

if TYPE_CHECKING:
    from watcher.contract.snapshot import SnapshotTarget
    from watcher.core.contract_doc import ContractDiff

__all__ = ["PROFILE_ENV_PREFIX", "UsageError", "build_target", "register", "run_diff", "run_snapshot"]

CLIENT_PROFILE_NAMES = ("typical", "roots", "none")
"""The names of `handshake.CLIENT_PROFILES`, repeated here so that building the parser does not import the
mcp SDK (a test keeps the two equal)."""
DEFAULT_CLIENT_PROFILE = "typical"
DEFAULT_CLIENT_PROFILES = ("typical", "none")


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
    snapshot.add_argument(
        "--client-profile",
        action="append",
        default=None,
        metavar="NAME",
        help=f"client capabilities to declare: {', '.join(CLIENT_PROFILE_NAMES)} or a comma list of them; repeat "
        f"to take the contract under several profiles (default: {' and '.join(DEFAULT_CLIENT_PROFILES)}); the "
        "first is written to DIR, the others to DIR/profiles/NAME; recorded in server.json",
    )
    snapshot.add_argument(
        "--no-version-probes",
        action="store_true",
        help="legacy era: record only the revision one initialize negotiates, instead of offering each known "
        "revision in turn",
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
        help="clients (default): fail on changes that break clients; dangerous: also on changes graded "
        "dangerous (a call that still validates but no longer means the same, e.g. a parameter now silently "
        "ignored); models: also on changes that affect models; lints: also on evolution lints; none: never fail",
    )
    diff.add_argument(
        "--server-name",
        metavar="NAME",
        help="the server's configured name in hosts: a renamed tool's report names the permission "
        "mcp__NAME__<old> that stops matching (default: <server>)",
    )
    diff.add_argument(
        "--accept",
        type=Path,
        metavar="FILE",
        help="accept file (YAML list of {rule, list, name, path?, reason, expires, by?}): matching changes that "
        "have not expired are reported under accepted and fail nothing",
    )
    diff.add_argument(
        "--level",
        action="append",
        default=[],
        metavar="RULE=LEVEL",
        help="re-grade a rule: breaking, models, info or ignore (repeatable); the original grade is kept beside",
    )
    diff.set_defaults(handler=run_diff, uses_config=False)

    accept = subparsers.add_parser(
        "accept",
        help="append accept-file entries for changes of a diff report",
        description="Read a diff report (JSON), pick changes with --select and append one entry per change to the "
        "accept file, so nobody writes them by hand.",
    )
    accept.add_argument("report", type=Path, metavar="REPORT.json", help="a report from `diff --format json`")
    accept.add_argument(
        "--select",
        action="append",
        required=True,
        metavar="WHAT",
        help="a rule id, LIST/NAME, RULE:LIST/NAME or 'all' (repeatable)",
    )
    accept.add_argument("--reason", required=True, help="why the change is accepted")
    accept.add_argument(
        "--expires",
        required=True,
        type=iso_date,
        metavar="YYYY-MM-DD",
        help="the last day the entry holds (today or later; a date already past is refused)",
    )
    accept.add_argument("--by", help="who accepts it")
    accept.add_argument("--file", type=Path, required=True, metavar="FILE", help="the accept file to append to")
    accept.set_defaults(handler=run_accept, uses_config=False)


def run_diff(args: argparse.Namespace) -> int:
    from watcher.contract.diff import SnapshotError, diff_snapshots
    from watcher.contract.report import fails, render
    from watcher.core import clock

    # The accept file's reader (YAML, pydantic) is imported only when --accept or --level asks for it.
    adjust = None
    if args.accept or args.level:
        from watcher.contract.accept import AcceptError, apply_acceptance, apply_levels, load_accept_file, parse_levels

        try:
            levels = parse_levels(args.level)
            accept_file = load_accept_file(args.accept) if args.accept else None
        except (ValueError, AcceptError) as exc:
            print(f"mcp-watcher diff: {exc}", file=sys.stderr)
            return 2

        def adjust(report: ContractDiff) -> ContractDiff:
            report = apply_levels(report, levels)
            if accept_file is not None:
                report = apply_acceptance(report, accept_file, clock.today())
            return report

    try:
        report = diff_snapshots(args.baseline, args.candidate, server_name=args.server_name, today=clock.today())
    except SnapshotError as exc:
        print(f"mcp-watcher diff: unusable input: {exc}", file=sys.stderr)
        return 2
    if adjust is not None:
        report = adjust(report)
    sys.stdout.write(render(report, args.format, fail_on=args.fail_on))
    return 1 if fails(report, args.fail_on) else 0


def run_accept(args: argparse.Namespace) -> int:
    from watcher.contract.accept import AcceptError, accept_entries, append_entries
    from watcher.contract.normalize import read_json
    from watcher.core import clock
    from watcher.core.contract_doc import load_contract_diff

    today = clock.today()
    if args.expires < today:  # an entry is in force through its expiry day: one already past accepts nothing
        print(
            f"mcp-watcher accept: --expires {args.expires.isoformat()} is in the past (today is {today.isoformat()}): "
            "such an entry would accept nothing; give the last day it should hold",
            file=sys.stderr,
        )
        return 2

    try:
        report = load_contract_diff(read_json(args.report), str(args.report))
    except (OSError, ValueError) as exc:  # ContractDocError is a ValueError: a document of another shape
        print(f"mcp-watcher accept: {args.report}: not a readable JSON report: {exc}", file=sys.stderr)
        return 2
    entries = accept_entries(report, args.select, args.reason, args.expires, args.by)
    if not entries:
        print(f"mcp-watcher accept: --select matched no change of {args.report}", file=sys.stderr)
        return 1
    try:
        append_entries(args.file, entries)
    except AcceptError as exc:
        print(f"mcp-watcher accept: {exc}", file=sys.stderr)
        return 2
    print(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'} appended to {args.file}")
    return 0


def run_snapshot(args: argparse.Namespace) -> int:
    from watcher.contract.snapshot import distinct_profiles, take_snapshot_sync

    try:
        target = build_target(args, os.environ)
    except UsageError as exc:
        print(f"mcp-watcher snapshot: {exc}", file=sys.stderr)
        return 2
    profiles = list(args.client_profile or DEFAULT_CLIENT_PROFILES)
    try:
        distinct_profiles(profiles)
    except ValueError as exc:
        print(f"mcp-watcher snapshot: --client-profile: {exc}", file=sys.stderr)
        return 2
    with progress.showing("snapshot"):
        progress.stage(
            f"starting the server and reading its contract ({args.era} era{'s' if args.era == 'both' else ''})"
        )
        summary = take_snapshot_sync(
            target,
            args.out,
            era=args.era,
            timeout=args.timeout,
            profile=args.profile,
            client_profile_name=profiles,
            probe_versions=not args.no_version_probes,
        )
    any_ok = False
    for index, (profile_name, eras) in enumerate(summary["profiles"].items()):
        for era, result in eras.items():
            counts = ", ".join(f"{name} {count}" for name, count in result["counts"].items())
            version = f", protocol {result['protocolVersion']}" if result.get("protocolVersion") else ""
            label = f"{era} (client profile {profile_name})" if index else era
            print(f"{label}: {result['status']}" + (f" ({counts}{version})" if counts else ""))
            any_ok = any_ok or result["status"] == "ok"
    if not any_ok:
        print(f"mcp-watcher snapshot: no era could be read: nothing usable in {args.out}", file=sys.stderr)
        return 1
    print(f"snapshot written to {args.out}")
    return 0


def _refuse_missing_command(command: list[str], cwd: str | None, environ: Mapping[str, str]) -> None:
    """A stdio command that does not exist is a usage error, not a snapshot of two failed eras."""
    if not command:
        return
    exe = command[0]
    if "/" in exe:
        path = Path(cwd or ".") / exe
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise UsageError(f"{exe}: no such executable file{f' (in --cwd {cwd})' if cwd else ''}")
    elif shutil.which(exe, path=environ.get("PATH")) is None:
        raise UsageError(f"{exe}: command not found on PATH; give its full path or install it")


def build_target(args: argparse.Namespace, environ: Mapping[str, str]) -> SnapshotTarget:
    """The target from the command line; every usage error is raised here, before any server starts."""
    from watcher.contract.snapshot import SnapshotTarget

    command = list(args.server_command or [])
    if command and command[0] == "--":
        command = command[1:]
    if bool(args.url) == bool(command):
        raise UsageError("give exactly one target: --url URL, or -- COMMAND ARGS… for a stdio server")
    _refuse_missing_command(command, args.cwd, environ)
    held = [name for name in args.env_from if name not in environ and name in vault.environ()]
    if held:
        raise UsageError(
            f"--env-from {held[0]}: {held[0]} is one of the watcher's own secret variables, taken out of its "
            f"environment at start; give the server its own value with a profile instead: "
            f"{PROFILE_ENV_PREFIX}NAME='env {held[0]}=…' and --profile NAME (docs/snapshot.md)"
        )
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
