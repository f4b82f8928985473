"""``mcp-watcher readiness [--json] [--today YYYY-MM-DD] [--offline]``.

One readiness pass, as the service runs it on the calendar's cadence: poll the conformance suite's npm
package (conditional request), read its newest version's requirement sets (installed once into the tools
environment), run every server against each new set, and queue the teams' notices. Then print readiness per
upcoming revision and per server. ``--offline`` only prints what the state holds (no poll, no run).

Exit status: 0 the pass worked (whatever the servers' readiness); 1 the suite could not be polled or read
(the reason on stderr, the last known readiness still printed); 2 the configuration is invalid; 130 interrupted
(SIGINT), 143 terminated (SIGTERM): the run under way is stopped, what finished before is kept.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading

from watcher.cli_support import Subparsers, config_and_state, config_error_exits_2, iso_date
from watcher.core import interrupts
from watcher.core.text import shown
from watcher.core.timefmt import today_utc


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "readiness",
        help="poll the conformance suite, run its new requirement sets, print readiness per server",
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print the readiness per revision as JSON")
    parser.add_argument("--today", type=iso_date, default=None, help="count days from this date (YYYY-MM-DD)")
    parser.add_argument("--offline", action="store_true", help="no poll and no run: print what the state holds")
    parser.set_defaults(handler=run_readiness)


@config_error_exits_2("readiness")
def run_readiness(args: argparse.Namespace) -> int:
    from watcher.readiness.cycle import check_readiness
    from watcher.readiness.view import collect_readiness

    today = args.today or today_utc()
    code = 0
    stop = threading.Event()
    with config_and_state(args) as (loaded, store):
        if not args.offline:
            with interrupts.cooperative(stop, "readiness"):
                summary = check_readiness(loaded, store, today=today, stop=stop)
            interrupted = interrupts.interrupted("readiness", "the pass was stopped; what finished before is kept")
            if interrupted is not None:
                return interrupted
            if not summary["ok"]:
                print(f"mcp-watcher readiness: {summary.get('error')}", file=sys.stderr)
                code = 1
            if summary.get("egress_refused"):
                from watcher.suites.judge.conformance import describe_refused

                said = describe_refused(summary["egress_refused"])
                print(shown(f"mcp-watcher readiness: suite {summary['suite_version']}'s install: egress {said}"))
        revisions = collect_readiness(loaded.config, store, today)
    if args.json:
        print(json.dumps([r.to_json() for r in revisions], indent=2, ensure_ascii=False))
        return code
    if not revisions:
        print("No upcoming revision has a requirement set or a release candidate yet.")
    for revision in revisions:
        print(
            f"{revision.revision}: {revision.ready} of {len(revision.servers)} servers ready, "
            f"projected release {revision.release} ({revision.days_left} days)"
        )
        for server in revision.servers:
            versions = f"SDK {server.sdk_version or '-'}, suite {server.suite_version or '-'}"
            print(shown(f"  {server.server} ({server.team}): {server.label}; {versions}"))
            for item in server.to_fix:
                link = f" <{item['spec'][0]}>" if item["spec"] else ""
                print(shown(f"    - {item['scenario']}: {item['message']}{link}"))  # the suite's words
    return code
