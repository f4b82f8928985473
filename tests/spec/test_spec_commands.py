"""``mcp-watcher deprecations`` as the lead's CLI calls it: register() on a subparsers object, then handler(args)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.spec.helpers import REGISTRY_PATH, fixture, poll, serve_spec, spec_config
from watcher.config import load_config
from watcher.core.store import Store
from watcher.spec.commands import register


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        serve_spec(fake)
        yield fake


def cli(config_path, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="mcp-watcher")
    parser.add_argument("--config")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["--config", str(config_path), *argv])
    return args.handler(args)


def test_json_for_todays_registry_resolves_every_row(gh, write_config, capsys):
    code = cli(write_config(spec_config(gh)), "deprecations", "--json", "--today", "2026-11-29")
    out, err = capsys.readouterr()
    rows = json.loads(out)
    assert code == 0, err
    assert len(rows) == 6 and all(r["resolved"] and r["basis"] for r in rows)
    assert all(r["state"] == "deprecated" for r in rows)
    roots = rows[0]
    assert {
        k: roots[k] for k in ("feature", "deprecated_in", "sep", "window_ends", "earliest_removal", "days_left")
    } == {
        "feature": "Roots",
        "deprecated_in": "2026-07-28",
        "sep": "SEP-2577",
        "window_ends": "2027-07-28",
        "earliest_removal": "2027-09-28",
        "days_left": 303,
    }
    assert roots["migration"].startswith("Pass directories or files")
    assert roots["earliest_removal_text"] == "First revision released on or after 2027-07-28"
    sse = rows[-1]
    assert (sse["window_ends"], sse["earliest_removal"]) == ("2026-09-03", "2027-03-30")


def test_the_table_lists_every_row_with_its_countdown(gh, write_config, capsys):
    code = cli(write_config(spec_config(gh)), "deprecations", "--today", "2026-11-29")
    out, _ = capsys.readouterr()
    assert code == 0
    header = out.splitlines()[0]
    for title in ("Feature", "State", "Deprecated in", "Migration", "Earliest removal", "Days left", "Basis"):
        assert title in header
    roots = next(line for line in out.splitlines() if line.startswith("Roots "))
    assert "deprecated" in roots and "2027-09-28 (proj.)" in roots and " 303 " in roots
    assert "HTTP+SSE transport" in out


def test_an_unresolved_row_exits_1_and_is_named_on_stderr(gh, write_config, capsys):
    gh.put_raw(REGISTRY_PATH, fixture("registry_shapes.mdx"))
    config = spec_config(gh, sep_final={3002: "2026-01-20"})
    code = cli(write_config(config), "deprecations", "--json", "--today", "2026-11-29")
    out, err = capsys.readouterr()
    assert code == 1
    assert "UNRESOLVED: Epsilon: unknown shape: Removed when the moon is full" in err
    states = {r["feature"]: r["state"] for r in json.loads(out)}
    assert states["Omega ping"] == "removed"


def test_an_unreadable_registry_falls_back_to_the_last_good_copy_or_exits_2(gh, write_config, capsys):
    path = write_config(spec_config(gh))
    gh.put_raw(REGISTRY_PATH, fixture("registry_renamed_column.mdx"))
    assert cli(path, "deprecations", "--json") == 2
    _, err = capsys.readouterr()
    assert "cannot read the registry" in err and "no last good copy in the state DB" in err

    gh.put_raw(REGISTRY_PATH, fixture("registry_today.mdx"))
    loaded = load_config(path)
    store = Store(loaded.resolve(loaded.config.state))
    poll(loaded, store)  # the service saves a last good copy
    store.close()
    gh.put_raw(REGISTRY_PATH, fixture("registry_broken_table.mdx"))
    code = cli(path, "deprecations", "--json", "--today", "2026-11-29")
    out, err = capsys.readouterr()
    assert code == 0
    assert len(json.loads(out)) == 6
    assert "note: cannot read the registry" in err and "showing the last good copy from the state DB (saved 20" in err


def test_offline_uses_the_state_only(gh, write_config, capsys):
    path = write_config(spec_config(gh))
    assert cli(path, "deprecations", "--offline") == 2
    capsys.readouterr()
    loaded = load_config(path)
    store = Store(loaded.resolve(loaded.config.state))
    poll(loaded, store)
    store.close()
    requests_before = len(gh.requests)
    assert cli(path, "deprecations", "--offline", "--json", "--today", "2026-11-29") == 0
    assert len(gh.requests) == requests_before
    assert len(json.loads(capsys.readouterr().out)) == 6


def test_the_cli_does_not_swallow_a_change_the_poller_has_yet_to_announce(gh, write_config, capsys):
    path = write_config(spec_config(gh))
    loaded = load_config(path)
    store = Store(loaded.resolve(loaded.config.state))
    poll(loaded, store)
    gh.put_raw(REGISTRY_PATH, fixture("registry_next.mdx"))
    assert cli(path, "deprecations", "--json") == 0
    capsys.readouterr()
    assert len(poll(loaded, store)["changes"]) == 4
    store.close()


def test_a_bad_config_or_date_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("spec:\n  calendar:\n    months: [13]\n")
    assert cli(bad, "deprecations") == 2
    assert "bad.yaml:3: spec.calendar.months" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli(bad, "deprecations", "--today", "29/11/2026")
    assert "'29/11/2026' is not a date written YYYY-MM-DD" in capsys.readouterr().err
