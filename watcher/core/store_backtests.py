"""The state of backtests (watcher/backtest): each backtest's parameters and progress, and the replayed runs'
results keyed by what was replayed. Its SQL lives here, beside `store.py`, which mixes `BacktestTables` into the
`Store`."""

from __future__ import annotations

import json
import threading
from typing import Any, cast

import sqlite_utils

from watcher.core import vault
from watcher.core.secret_policy import masked_json
from watcher.core.store_schema import BacktestResultRow, BacktestRow, backtest_result_row
from watcher.core.timefmt import iso, utcnow


class BacktestTables:
    """The backtest queries of the `Store` (its `db` and lock)."""

    db: sqlite_utils.Database
    _lock: threading.RLock

    def create_backtest(self, server: str, sdk: str, package: str, since: str, until: str, params: str) -> int:
        with self._lock:
            cur = self.db.execute(
                "insert into backtests (server, sdk, package, since, until, params, status, created) "
                "values (?, ?, ?, ?, ?, ?, 'running', ?)",
                [server, sdk, package, since, until, params, iso(utcnow())],
            )
            return int(cur.lastrowid or 0)

    def update_backtest(self, backtest_id: int, **fields: Any) -> None:
        if "answer" in fields:
            fields["answer"] = json.dumps(fields["answer"], sort_keys=True, default=str)
        with self._lock:
            self.db.table("backtests").update(backtest_id, fields)

    def backtest(self, backtest_id: int) -> BacktestRow | None:
        rows = list(self.db.query("select * from backtests where id = ?", [backtest_id]))
        return _backtest_row(rows[0]) if rows else None

    def unfinished_backtest(self, params: str) -> BacktestRow | None:
        """The newest backtest with these parameters that did not finish (interrupted or killed)."""
        rows = list(
            self.db.query(
                "select * from backtests where params = ? and status != 'done' order by id desc limit 1", [params]
            )
        )
        return _backtest_row(rows[0]) if rows else None

    def latest_backtests(self) -> list[BacktestRow]:
        """Each server's newest backtest."""
        rows = self.db.query(
            "select b.* from backtests b join (select server, max(id) as id from backtests group by server) last "
            "on b.id = last.id order by b.server"
        )
        return [_backtest_row(row) for row in rows]

    def backtest_result(self, key: str) -> BacktestResultRow | None:
        rows = list(self.db.query("select * from backtest_results where key = ?", [key]))
        if not rows:
            return None
        return backtest_result_row(rows[0])

    def put_backtest_result(self, row: BacktestResultRow) -> None:
        with self._lock:
            self.db.table("backtest_results").upsert(
                {**row, "report": masked_json(row["report"], vault.held_values())}, pk="key"
            )


def _backtest_row(row: dict[str, Any]) -> BacktestRow:
    return cast(BacktestRow, {**row, "answer": json.loads(row["answer"]) if row["answer"] else None})
