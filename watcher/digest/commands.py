"""``mcp-watcher digest [--preview | --send] [--force] [--team NAME] [--format slack|markdown|html]
[--today YYYY-MM-DD] [--out DIR]``.

Both read the spec first when the state has no copy of its registry, or one older than
``schedule.spec_poll_minutes`` (as ``deprecations`` does); a read that fails is named in the digest's
problems. --preview (the default) renders each digest team's digest without sending anything: the text to stdout
(or into --out), the timeline PNG into --out (default: the state folder's digests/preview). --send queues
the digest in the outbox — once per team and ISO week; --force queues it again under a distinct key — and
delivers the outbox (Slack, or the console without credentials). Exit status: 0 done; 2 bad usage or
configuration; 3 some notice could not be delivered yet (it stays queued; see ``mcp-watcher outbox``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from watcher.cli_support import Subparsers, config_and_state, iso_date
from watcher.core.text import shown

if TYPE_CHECKING:
    from watcher.config import LoadedConfig
    from watcher.core.store import Store
    from watcher.notify.settings import Team

EXTENSIONS = {"slack": "json", "markdown": "md", "html": "html"}
DELIVERED = ("sent", "console")


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "digest",
        help="render (--preview) or send (--send) the weekly deprecation digest",
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--preview", action="store_true", help="render without sending (the default)")
    mode.add_argument("--send", action="store_true", help="queue this week's digest and deliver it")
    parser.add_argument("--force", action="store_true", help="with --send: send again though sent this week")
    parser.add_argument("--team", default=None, help="only this team (default: every team with digest: true)")
    parser.add_argument("--format", choices=tuple(EXTENSIONS), default="markdown", help="preview format")
    parser.add_argument("--today", type=iso_date, default=None, help="the digest's date (YYYY-MM-DD)")
    parser.add_argument("--out", type=Path, default=None, help="write the preview and the PNG into this folder")
    parser.set_defaults(handler=run_digest)


def _teams(loaded: LoadedConfig, name: str | None) -> list[Team] | None:
    teams = loaded.config.teams
    if name is None:
        return [team for team in teams if team.digest]
    chosen = [team for team in teams if team.name == name]
    if not chosen:
        print(f"mcp-watcher digest: no team named {name!r}; configured: {[t.name for t in teams]}", file=sys.stderr)
        return None
    return chosen


def run_digest(args: argparse.Namespace) -> int:
    if args.force and not args.send:
        print("mcp-watcher digest: --force only applies with --send", file=sys.stderr)
        return 2
    with config_and_state(args) as (loaded, store):
        teams = _teams(loaded, args.team)
        if teams is None:
            return 2
        if not teams:
            print("mcp-watcher digest: no team has digest: true (name one with --team)", file=sys.stderr)
            return 0
        if args.send:
            return _send(loaded, store, teams, args)
        return _preview(loaded, store, teams, args)


def _send(loaded: LoadedConfig, store: Store, teams: list[Team], args: argparse.Namespace) -> int:
    from watcher.core.timefmt import utcnow
    from watcher.digest.model import iso_week
    from watcher.digest.schedule import digest_zone, queue_digest
    from watcher.notify import keys
    from watcher.notify.delivery import deliver_outbox, make_sink
    from watcher.notify.settings import slack_credentials
    from watcher.spec.view import fresh_spec_view

    now = utcnow()
    today = args.today or now.astimezone(digest_zone(loaded.config.digest)).date()
    watched: list[str] = []
    spec = fresh_spec_view(loaded.config, store, today, now)
    for team in teams:
        queued = queue_digest(loaded, store, team, now, today=args.today, force=args.force, spec=spec)
        if queued is None:
            key = keys.weekly_digest(team.name, iso_week(today))
            print(f"{team.name}: the digest for {iso_week(today)} was already queued (--force sends it again)")
            watched += [row["key"] for row in store.outbox() if row["key"] == key or row["thread_of"] == key]
        else:
            print(f"{team.name}: queued {queued.key} ({len(queued.keys)} message(s), picture {queued.picture})")
            watched += queued.keys
    config = loaded.config
    report = deliver_outbox(store, make_sink(slack_credentials(config.slack), config.slack, store))
    print(f"outbox: {len(report.sent)} delivered, {len(report.retry_later)} to retry, {len(report.failed)} failed")
    undelivered = []
    for key in watched:
        row = store.outbox_row(key)
        if row is not None and row["status"] not in DELIVERED:
            undelivered.append(key)
            print(f"  not delivered: {key}: {row['status']} ({row['last_error'] or 'waiting for its thread'})")
    return 3 if undelivered else 0


def _preview(loaded: LoadedConfig, store: Store, teams: list[Team], args: argparse.Namespace) -> int:
    from watcher.core.timefmt import utcnow
    from watcher.digest.build import build_digest
    from watcher.digest.markdown import render_html, render_markdown
    from watcher.digest.schedule import digest_zone, pictures_dir
    from watcher.digest.slack import slack_messages, slack_payloads
    from watcher.digest.timeline import digest_timeline, write_timeline
    from watcher.spec.view import fresh_spec_view

    now = utcnow()
    today = args.today or now.astimezone(digest_zone(loaded.config.digest)).date()
    out_dir: Path = args.out or (pictures_dir(loaded) / "preview")
    spec = fresh_spec_view(loaded.config, store, today, now)
    for team in teams:
        digest = build_digest(loaded, store, team.name, today, spec=spec)
        stem = f"digest-{team.name}-{digest.week}"
        picture = write_timeline(digest_timeline(digest), out_dir / f"{stem}.png")
        # Inside --out the page refers to the PNG beside it; on stdout, by its full path.
        reference = picture.name if args.out else str(picture.resolve())
        if args.format == "slack":
            text = json.dumps(
                {"team": team.name, "channel": team.slack_channel, "messages": slack_payloads(slack_messages(digest))},
                indent=2,
                ensure_ascii=False,
            )
        elif args.format == "html":
            text = render_html(digest, reference)
        else:
            text = render_markdown(digest, reference)
        if args.out:
            target = out_dir / f"{stem}.{EXTENSIONS[args.format]}"
            target.write_text(text, encoding="utf-8")
            print(f"{team.name}: {target} and {picture}")
        else:
            print(shown(text, keep="\n\t"))
            print(f"{team.name}: timeline picture {picture}", file=sys.stderr)
    return 0
