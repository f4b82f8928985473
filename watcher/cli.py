"""mcp-watcher … — the one command-line entry point."""

from __future__ import annotations

import argparse
import difflib
import re
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from watcher.backtest.commands import register as register_backtest_command
from watcher.boundary import reaper
from watcher.cli_support import config_and_state, loaded_config
from watcher.contract.commands import register as register_contract_commands

# Only what parsing the command line needs: each command imports its own modules inside its handler,
# so `--help` or a `diff` does not pay for the whole product (mcp, matplotlib, the providers…).
from watcher.core import clock, interrupts, vault
from watcher.core.clock import ClockSettingError
from watcher.core.errors import ConfigError, SchemaTooNew, StateError
from watcher.core.logs import setup_logging
from watcher.core.text import shown_streams
from watcher.digest.commands import register as register_digest_command
from watcher.evaluation.commands import register as register_evaluation_command
from watcher.readiness.commands import register as register_readiness_command
from watcher.spec.commands import register as register_spec_commands
from watcher.suites.commands import register as register_suite_commands

if TYPE_CHECKING:
    from watcher.config import LoadedConfig, WatcherConfig
    from watcher.core.store import Store
    from watcher.polling.poll import PollResult


class _Parser(argparse.ArgumentParser):
    """argparse's parser, which also names the nearest valid choice after a typo (`pol` → `poll`).
    Subcommands' parsers are made of the same class, so their options' choices get it too."""

    def error(self, message: str) -> NoReturn:
        typo = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if typo:
            near = difflib.get_close_matches(typo.group(1), re.findall(r"'([^']*)'", typo.group(2)), n=1)
            if near:
                message += f"; did you mean '{near[0]}'?"
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mcp-watcher",
        description="Warns teams that run MCP servers before SDK betas and spec deprecations break them.",
    )
    parser.add_argument(
        "--config", help="config file (default: $MCP_WATCHER_CONFIG, else config/watcher.yaml)", default=None
    )
    parser.add_argument("--log-level", default=None, help="DEBUG, INFO, WARNING or ERROR (default: from config)")
    sub: argparse._SubParsersAction[argparse.ArgumentParser] = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )

    run = sub.add_parser("run", help="start the long-running service (scheduler)")
    run.add_argument("--port", type=int, default=None, help="HTTP port for /healthz, /readyz, /metrics")
    run.add_argument(
        "--once",
        action="store_true",
        help="run every job once, then exit (a smoke test): exit 0 every job did its work; 1 a job failed "
        "(e.g. every source failed); 3 the jobs ran, but a source failed or a notice is still undelivered",
    )
    run.add_argument(
        "--check",
        action="store_true",
        help="check what the service needs at start (config, Slack credentials and what Slack says of the token, "
        "state folder and lock, the pages' files, node, uv) without starting it; exit 0 ready, 1 not",
    )
    run.set_defaults(handler=cmd_run)

    poll = sub.add_parser("poll", help="poll every SDK source once, record, notify")
    poll.add_argument("--json", action="store_true", help="print one JSON object")
    poll.add_argument("--no-deliver", action="store_true", help="queue notices without sending them")
    poll.add_argument("--suites", action="store_true", help="also run the suite runs this poll queued")
    poll.set_defaults(handler=cmd_poll)

    status = sub.add_parser("status", help="sources, last polls, newest versions, runs, outbox")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=cmd_status)

    outbox = sub.add_parser("outbox", help="list undelivered or failed notices; retry failed ones")
    outbox.add_argument("--retry-failed", action="store_true", help="queue failed notices again and deliver")
    outbox.add_argument(
        "--resend-console",
        action="store_true",
        help="post notices that were only printed to the console (each once), now that Slack is configured",
    )
    outbox.add_argument("--since", default=None, help="with --resend-console: only those printed on or after DATE")
    outbox.set_defaults(handler=cmd_outbox)

    init = sub.add_parser(
        "init",
        help="write a first configuration (config/watcher.yaml below the folder) whose paths work from there",
    )
    init.add_argument("--dir", type=Path, default=Path("."), help="the folder to write into (default: this one)")
    init.add_argument("--force", action="store_true", help="replace a config/watcher.yaml that is there already")
    init.set_defaults(handler=cmd_init, uses_config=False)

    # Capabilities that add their own subcommands.
    register_spec_commands(sub)
    register_contract_commands(sub)
    register_suite_commands(sub)
    register_digest_command(sub)
    register_evaluation_command(sub)
    register_backtest_command(sub)
    register_readiness_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    # SIGINT and SIGTERM handled whatever was inherited (a script's `cmd &` starts it with SIGINT ignored);
    # the long commands turn them into their stop event, and the children left at the end are stopped.
    with interrupts.handled(force=reaper.stop_all):
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # The terminal's escaping layer: whatever a command prints (versions, team files' values, errors quoting
    # a file) reaches the terminal with its control characters shown, never sent.
    with shown_streams():
        return _run(args, _setup_logging(args))


def _run(args: argparse.Namespace, config: WatcherConfig | None) -> int:
    try:
        clock.now()  # a bad MCP_WATCHER_CLOCK_START is a usage error before any work starts
        if not _uses_config(args):
            return int(args.handler(args) or 0)
        from watcher.config import granted_env_names, own_secret_names

        # The watcher's own secrets leave its environment (and the process becomes non-dumpable)
        # before any command can start code under test.
        with vault.sealed(own_secret_names(config), granted_env_names(config)):
            return int(args.handler(args) or 0)
    except ConfigError as exc:
        print(f"mcp-watcher: configuration error:\n{exc}", file=sys.stderr)
        return 2
    except (SchemaTooNew, StateError, ClockSettingError) as exc:
        print(f"mcp-watcher: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return interrupts.exit_code(interrupts.received() or signal.SIGINT)


def _uses_config(args: argparse.Namespace) -> bool:
    """False for commands that only read the files they are given and start no other code (`diff`,
    `accept`): they skip reading the configuration, and so start in a fraction of the time."""
    return bool(getattr(args, "uses_config", True))


def _setup_logging(args: argparse.Namespace) -> WatcherConfig | None:
    level, as_json = args.log_level, False
    config = None
    if not _uses_config(args):
        setup_logging(level or "INFO", as_json)
        return None
    from watcher.config import load_config

    try:
        config = load_config(args.config).config
        level = level or config.log.level
        as_json = config.log.json_format
    except ConfigError:
        pass  # the command itself reports it
    setup_logging(level or "INFO", as_json)
    return config


def cmd_poll(args: argparse.Namespace) -> int:
    with config_and_state(args) as (loaded, store):
        return _poll(args, loaded, store)


def _poll(args: argparse.Namespace, loaded: LoadedConfig, store: Store) -> int:
    import json

    from watcher.notify.delivery import DeliveryReport, deliver_outbox, make_sink
    from watcher.notify.settings import slack_credentials
    from watcher.pipeline import poll_cycle, process_queue

    def deliver() -> DeliveryReport:
        credentials = slack_credentials(loaded.config.slack)
        _warn_if_degraded(loaded, credentials)
        sink = make_sink(credentials, loaded.config.slack, store, sys.stderr if args.json else None)
        return deliver_outbox(store, sink)

    cycle = poll_cycle(loaded, store, None if args.no_deliver else deliver)
    result, queued, delivered = cycle.result, cycle.queued, cycle.delivered
    if args.json:
        out = result.as_json()
        out["queued_runs"] = queued
        print(json.dumps(out, indent=2))
    else:
        _print_poll(result, queued)
    if delivered and (delivered.failed or delivered.retry_later):
        print(
            f"notices: {len(delivered.sent)} sent, {len(delivered.retry_later)} to retry, "
            f"{len(delivered.failed)} failed (see `mcp-watcher outbox`)",
            file=sys.stderr,
        )
    if args.suites and queued:
        process_queue(loaded, store)
        if not args.no_deliver:
            deliver_outbox(store, make_sink(slack_credentials(loaded.config.slack), loaded.config.slack, store))
    return 0 if not result.failed else 3


def _warn_if_degraded(loaded: LoadedConfig, credentials: Any) -> None:
    from watcher.notify.destination import describe_destination

    destination = describe_destination(loaded.config.slack, credentials)
    if destination.degraded:
        print(f"mcp-watcher: WARNING: {destination.reason}", file=sys.stderr)


def _print_poll(result: PollResult, queued: list[str]) -> None:
    for outcome in result.outcomes:
        if not outcome.ok:
            print(f"{outcome.sdk:24} FAILED: {outcome.error}")
        elif outcome.baseline:
            print(f"{outcome.sdk:24} baseline taken (history recorded, no alerts)")
        elif outcome.new:
            versions = ", ".join(f"{r.version}{' (pre-release)' if r.prerelease else ''}" for r in outcome.new)
            print(f"{outcome.sdk:24} new: {versions}")
        else:
            note = "unchanged" if outcome.not_modified else "checked"
            print(f"{outcome.sdk:24} no new versions ({note}, {outcome.requests} request(s))")
    if queued:
        print(f"suite runs queued: {', '.join(queued)}")


def cmd_status(args: argparse.Namespace) -> int:
    import json

    from watcher.ops.status import collect_status, render_status

    with config_and_state(args) as (loaded, store):
        status = collect_status(loaded, store)
    print(json.dumps(status, indent=2, default=str) if args.json else render_status(status))
    return 0


def cmd_outbox(args: argparse.Namespace) -> int:
    with config_and_state(args) as (loaded, store):
        return _outbox(args, loaded, store)


def _outbox(args: argparse.Namespace, loaded: LoadedConfig, store: Store) -> int:
    from watcher.core.text import shown
    from watcher.notify.delivery import deliver_outbox, make_sink
    from watcher.notify.resend import requeue_failed, resend_console
    from watcher.notify.settings import slack_credentials

    if args.resend_console:
        code = resend_console(loaded, store, args.since)
        if code:
            return code
    if args.retry_failed:
        requeue_failed(loaded.config, store)  # routed by the current config, not the channel stored with the row
        deliver_outbox(store, make_sink(slack_credentials(loaded.config.slack), loaded.config.slack, store))
    rows = store.outbox(statuses=("queued", "sending", "posted", "failed"))
    console = len(store.outbox(statuses=("console",)))
    if not rows:
        print("outbox: nothing pending, nothing failed")
    if console and not args.resend_console:
        print(
            f"outbox: {console} notice(s) were printed to the console only; "
            "`mcp-watcher outbox --resend-console` posts them once Slack is configured"
        )
    for row in rows:
        print(shown(f"{row['status']:8} {row['created']} {row['team']:12} {row['channel']:20} {row['key']}"))
        if row["last_error"]:
            print(shown(f"         last error: {row['last_error']}"))
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from watcher.ops.starter import StarterExists, write_starter

    try:
        path = write_starter(args.dir, force=args.force)
    except (StarterExists, OSError) as exc:
        print(f"mcp-watcher init: {exc}", file=sys.stderr)
        return 1
    shown = path if args.dir == Path(".") else path.resolve()
    print(f"wrote {shown}: every official SDK, one team (my-team) and no servers yet")
    print(
        f"next: edit its teams and servers, then `mcp-watcher{'' if args.dir == Path('.') else f' --config {shown}'} "
        "run --check` and `mcp-watcher run`"
    )
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    if args.check:
        from watcher.startup_check import startup_check

        lines = startup_check(loaded_config(args))
        for line in lines:
            print(line)
        failed = any(line.startswith("FAIL") for line in lines)
        print("start-up check: " + ("FAILED" if failed else "ready to start"))
        return 1 if failed else 0
    from watcher.service import run_service

    return run_service(loaded_config(args), port=args.port, once=args.once)


if __name__ == "__main__":
    raise SystemExit(main())
