"""`--post`: the answer to the team's channel through the outbox (one notice per backtest, with its picture)."""

from __future__ import annotations

import sys
from typing import TextIO

from watcher.backtest.answer import BacktestAnswer
from watcher.backtest.render import conclusion, headline
from watcher.backtest.timeline import render
from watcher.config import LoadedConfig
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.notify import blocks
from watcher.notify.delivery import deliver_outbox, make_sink
from watcher.notify.settings import slack_credentials


def notice(loaded: LoadedConfig, answer: BacktestAnswer) -> Notice:
    team = loaded.config.team(answer["team"])
    text = blocks.escape("\n".join([headline(answer), *conclusion(answer)]))
    folder = loaded.resolve(loaded.config.suites.runs_dir) / "_backtests" / str(answer["id"])
    folder.mkdir(parents=True, exist_ok=True)
    picture = folder / "timeline.png"
    picture.write_bytes(render(answer).png)
    sections = blocks.split_text(blocks.escape("\n".join(conclusion(answer))))
    body = [blocks.header(headline(answer)), *(blocks.section(part) for part in sections)]
    return Notice(
        key=f"backtest:{answer['id']}:{answer['generated']}:{team.name}",
        team=team.name,
        channel=team.slack_channel,
        kind="backtest",
        text=text,
        blocks=body,
        files=[{"path": str(picture), "title": headline(answer), "filename": f"backtest-{answer['id']}.png"}],
    )


def post(loaded: LoadedConfig, store: Store, answer: BacktestAnswer, console: TextIO | None = None) -> str:
    """Queue the notice and deliver the outbox (a console notice goes to `console`, standard error by default:
    the one of that moment, which the CLI wraps in its escaping layer); says what happened."""
    console = console or sys.stderr
    made = notice(loaded, answer)
    store.enqueue(made)
    sink = make_sink(slack_credentials(loaded.config.slack), loaded.config.slack, store, console)
    result = deliver_outbox(store, sink)
    sent = made.key in result.sent
    return (
        f"backtest posted to {made.channel}"
        if sent
        else f"backtest queued for {made.channel} (see `mcp-watcher outbox`)"
    )
