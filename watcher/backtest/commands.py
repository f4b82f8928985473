"""`mcp-watcher backtest --server NAME [--server NAME …] [--team TEAM] [--since DATE] [--until DATE]
[--sdk-package PKG]`: would it have warned us? Each server's suites against every SDK version published in the
period, and the lead time; with several servers, the clusters of those that failed the same way per version."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from datetime import timedelta
from typing import TYPE_CHECKING

from watcher.cli_support import Subparsers, config_and_state, config_error_exits_2, iso_date
from watcher.core import interrupts
from watcher.core.errors import ConfigError
from watcher.core.text import shown
from watcher.core.timefmt import today_utc

if TYPE_CHECKING:  # the config and the state are loaded by the handler, not when the parser is built
    from watcher.backtest.answer import BacktestAnswer
    from watcher.config import LoadedConfig, WatcherConfig
    from watcher.core.store import Store

DEFAULT_DAYS = 180
"""Without --since: the last half year."""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "backtest",
        help="replay an SDK's past releases against a server: would the watcher have warned you, how early",
        description="Read the SDK's whole release history from its registry and run the server's suites against "
        "every version published in the period, pre-releases and finals, in publication order. Per release line: "
        "the first version that showed each problem, the final that shipped it and the lead time. Results are "
        "kept: an interrupted backtest continues, a repeat costs nothing. Exit 0 done, 2 config error, "
        "3 history unreadable, 130 interrupted (SIGINT), 143 terminated (SIGTERM).",
    )
    parser.add_argument(
        "--server",
        action="append",
        default=[],
        help="a server name from the config's servers; repeat it for several (their clusters are listed)",
    )
    parser.add_argument("--team", default=None, help="every server of this team (with any --server given)")
    parser.add_argument(
        "--since",
        type=iso_date,
        default=None,
        help=f"first publication day, YYYY-MM-DD (default: {DEFAULT_DAYS} days ago)",
    )
    parser.add_argument(
        "--until", type=iso_date, default=None, help="last publication day, YYYY-MM-DD (default: today)"
    )
    parser.add_argument(
        "--sdk-package", default=None, help="replay this package's history instead of the server's SDK package"
    )
    parser.add_argument("--json", action="store_true", help="print the answer as JSON (same as --format json)")
    parser.add_argument(
        "--format", choices=["text", "json", "markdown"], default="text", help="how to print the answer"
    )
    parser.add_argument("--post", action="store_true", help="also post the answer to the team's Slack channel")
    parser.set_defaults(handler=backtest_command)


@config_error_exits_2("backtest")
def backtest_command(args: argparse.Namespace) -> int:
    # The replay needs the suite runner and the mcp SDK: imported here, not when the parser is built.
    from watcher.backtest.progress import TerminalProgress
    from watcher.backtest.render import render_markdown, render_text
    from watcher.backtest.replay import BacktestError, run_backtest

    until = args.until or today_utc()
    since = args.since or until - timedelta(days=DEFAULT_DAYS)
    if since > until:
        print(f"mcp-watcher backtest: --since {since} is after --until {until}", file=sys.stderr)
        return 2
    fmt = "json" if args.json else args.format
    stop = threading.Event()
    with config_and_state(args) as (loaded, store):
        names = _servers(loaded.config, args.server, args.team)
        if not names:
            print("mcp-watcher backtest: name a server (--server) or a team with servers (--team)", file=sys.stderr)
            return 2
        answers: list[BacktestAnswer] = []
        try:
            with interrupts.cooperative(stop, "backtest"):
                for name in names:
                    answers.append(
                        run_backtest(
                            loaded,
                            store,
                            name,
                            since,
                            until,
                            sdk_package=args.sdk_package,
                            progress=TerminalProgress(sys.stderr),
                            stop=stop,
                        )
                    )
                    if answers[-1]["status"] != "done":
                        break
        except BacktestError as exc:
            print(f"mcp-watcher backtest: {exc}", file=sys.stderr)
            return 3
        if len(names) > 1:
            return _several(loaded, store, answers, fmt, post=args.post)
        answer = answers[0]
        if fmt == "json":
            print(json.dumps(answer, indent=2, default=str))
        elif fmt == "markdown":
            print(shown(render_markdown(answer), keep="\n"), end="")
        else:
            print(shown(render_text(answer), keep="\n"))  # versions and problems come from outside
        if answer["status"] != "done":
            code = interrupts.interrupted("backtest", "run the same command again to continue")
            return code if code is not None else interrupts.exit_code(signal.SIGINT)
        if args.post:
            from watcher.backtest.notices import post

            print(post(loaded, store, answer), file=sys.stderr)
    return 0


def _servers(config: WatcherConfig, named: list[str], team: str | None) -> list[str]:
    """The servers asked for, in the order given, each once (an unknown name or team is a ConfigError)."""
    for name in named:
        config.server(name)
    if team is not None and not any(t.name == team for t in config.teams):
        raise ConfigError(f"no team named {team!r}; configured: {[t.name for t in config.teams]}")
    of_team = [s.name for s in config.servers if team is not None and s.team == team]
    return list(dict.fromkeys([*named, *of_team]))


def _several(loaded: LoadedConfig, store: Store, answers: list[BacktestAnswer], fmt: str, *, post: bool) -> int:
    """Several servers' backtests: each as alone, then the clusters per version."""
    from watcher.backtest.render import render_markdown, render_text
    from watcher.clusters.backtest import cluster_backtests, render_clusters

    clusters, figures = cluster_backtests(loaded, store, answers)
    if fmt == "json":
        document = {
            "backtests": answers,
            "clusters": [c.as_dict() for c in clusters],
            "figures": figures.as_dict(),
        }
        print(json.dumps(document, indent=2, default=str))
    else:
        for answer in answers:
            print(render_markdown(answer) if fmt == "markdown" else render_text(answer))
        print(render_clusters(clusters, figures))
    if any(a["status"] != "done" for a in answers):
        code = interrupts.interrupted("backtest", "run the same command again to continue")
        return code if code is not None else interrupts.exit_code(signal.SIGINT)
    if post:
        from watcher.backtest.notices import post as post_answer

        for answer in answers:
            print(post_answer(loaded, store, answer), file=sys.stderr)
    return 0
