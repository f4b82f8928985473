"""The history a backtest replays: the recorded PyPI page of `mcp` read through the poll adapter from the
loopback registry (`url:`), cut to the period, in publication order; an unreadable registry is an exit 3."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tests.backtest.helpers import fastmcp_server, write_config
from tests.fakes.registry_server import serve_registry
from watcher.backtest.history import read_history, select
from watcher.backtest.replay import BacktestError, run_backtest
from watcher.cli import main
from watcher.core.store import Store


@pytest.fixture
def registry():
    with serve_registry() as fake:
        yield fake


def test_the_summer_of_2026_in_publication_order(tmp_path: Path, registry):
    loaded = write_config(tmp_path, registry.url("pypi/simple"), [fastmcp_server()], tmp_path / "envs")
    store = Store(tmp_path / "state.db")
    releases = read_history(loaded.config, store, loaded.config.sdk("python"))
    period = select("pypi", releases, date(2026, 6, 1), date(2026, 7, 31))
    assert [(r.version, r.published.date().isoformat(), r.line) for r in period.versions] == [
        ("2.0.0a1", "2026-06-11", "2.x"),
        ("1.28.0", "2026-06-16", "1.x"),  # 21:37, before a2 at 22:01 the same day
        ("2.0.0a2", "2026-06-16", "2.x"),
        ("2.0.0a3", "2026-06-26", "2.x"),
        ("1.28.1", "2026-06-26", "1.x"),
        ("2.0.0b1", "2026-06-30", "2.x"),
        ("2.0.0b2", "2026-07-14", "2.x"),
        ("2.0.0rc1", "2026-07-27", "2.x"),
        ("1.29.0", "2026-07-28", "1.x"),
        ("2.0.0", "2026-07-28", "2.x"),
    ]
    assert [r.prerelease for r in period.versions if r.line == "2.x"] == [True] * 6 + [False]
    assert registry.stats.by_path["/pypi/simple/mcp/"] == 1
    # A server on 2.3 would not move to a 1.x maintenance release, nor to 2.0.1 published after 2.1.1.
    on_2x = select("pypi", releases, date(2026, 6, 1), date(2026, 8, 31), on_line_of="2.3.0")
    assert {r.line for r in on_2x.versions} == {"2.x"}
    assert [r.version for r in on_2x.versions][-3:] == ["2.0.0", "2.1.0", "2.1.1"]
    assert on_2x.older_lines == ["1.28.0", "1.28.1", "1.29.0", "1.29.1", "2.0.1"]
    # A server still on 2.0 is offered that backport.
    on_20 = select("pypi", releases, date(2026, 6, 1), date(2026, 8, 31), on_line_of="2.0.0")
    assert [r.version for r in on_20.versions][-1] == "2.0.1"


def test_an_unreadable_registry_stops_the_backtest_with_its_reason(tmp_path: Path, registry, capsys):
    loaded = write_config(tmp_path, registry.url("pypi/simple"), [fastmcp_server()], tmp_path / "envs")
    registry.fail("/pypi/simple/mcp/", status=503)
    store = Store(loaded.resolve(loaded.config.state))
    with pytest.raises(BacktestError, match="cannot read the history of mcp from pypi: .*HTTP 503"):
        run_backtest(loaded, store, "notes-1x", date(2026, 6, 1), date(2026, 7, 31))
    store.close()
    argv = ["--config", str(loaded.path), "backtest", "--server", "notes-1x", "--since", "2026-06-01"]
    assert main(argv) == 3
    assert "HTTP 503" in capsys.readouterr().err


def test_a_period_without_versions_and_a_reversed_period(tmp_path: Path, registry, capsys):
    loaded = write_config(tmp_path, registry.url("pypi/simple"), [fastmcp_server()], tmp_path / "envs")
    argv = ["--config", str(loaded.path), "backtest", "--server", "notes-1x"]
    assert main([*argv, "--since", "2026-11-02", "--until", "2026-11-03"]) == 3
    assert "lists no version of mcp published 2026-11-02 … 2026-11-03" in capsys.readouterr().err
    assert main([*argv, "--since", "2026-11-03", "--until", "2026-11-02"]) == 2
    assert main([*argv.copy()[:-1], "nobody"]) == 2
