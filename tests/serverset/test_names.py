"""Team files cannot hurt other teams: a server name another repository owns by record is refused for that one
server (whatever the order of `repos`), the claimant is told naming both repositories, a retired name stays
reserved, and the merged configuration is always one the service can start with. Real git repositories."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.fakes.slack_server import FakeSlack
from tests.repos.helpers import central_config, change, team_repo
from watcher.cli import main
from watcher.core.store import Store
from watcher.live import LiveConfig
from watcher.notify.delivery import WebApiSink, deliver_outbox
from watcher.notify.settings import SlackSettings
from watcher.reload import ConfigKeeper
from watcher.repos.sync import effective_config, sync_repos

SERVER = """\
  - name: {name}
    path: server
    start: [python, server.py]
"""


def team_file(*names: str) -> str:
    return "servers:\n" + "".join(SERVER.format(name=n) for n in names)


def test_a_name_owned_by_record_stays_its_owners_whatever_the_order_of_repos(
    tmp_path: Path, slack: FakeSlack, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.INFO, logger="watcher")
    books = team_repo(tmp_path / "books-repo", "shelf", team_file=team_file("shelf"))
    search = team_repo(tmp_path / "search-repo", "catalog", team_file=team_file("catalog"))
    # search is listed first: listing order would hand it any name both declare; the record must not
    central = central_config(
        tmp_path,
        [{"git": str(search), "team": "infra"}, {"git": str(books), "team": "books"}],
        slack={"api_url": slack.api_url, "retries": 1},
    )
    store = Store(tmp_path / "state" / "watcher.db")
    keeper = ConfigKeeper(LiveConfig(central), store, lambda: None)

    def sync() -> list[str]:
        result = sync_repos(central, store)
        keeper.refresh(result.repos)
        return sorted(s.name for s in keeper.live.config.servers)

    assert sync() == ["catalog", "shelf"]  # the first look: shelf is recorded as books's

    # search now declares shelf too (and a new server of its own): only its shelf is refused
    change(search, {".mcp-watcher.yaml": team_file("catalog", "shelf", "index")})
    assert sync() == ["catalog", "index", "shelf"]
    shelf = keeper.live.config.server("shelf")
    assert shelf.team == "books" and shelf.source is not None and shelf.source.git == str(books)
    [search_state] = [s for s in sync_repos(central, store).repos if s.git == str(search)]
    assert search_state.error is None and list(search_state.refused) == ["shelf"]
    refusal = search_state.refused["shelf"]
    assert f"server 'shelf' belongs to {books} (declared there since " in refusal
    assert ".mcp-watcher.yaml:5: servers: " in refusal  # the claimant's own file and line

    # The claimant is told once, in its own channel, naming both repositories; the owner hears nothing.
    sync()
    deliver_outbox(store, WebApiSink(slack.token, SlackSettings(api_url=slack.api_url, retries=1), store))
    to_infra = [m["text"] for m in slack.messages if m["channel"] == slack.channel_id("#infra-mcp")]
    assert len(to_infra) == 1
    assert str(search) in to_infra[0] and str(books) in to_infra[0] and "'shelf'" in to_infra[0]
    assert "The file's other servers are used; shelf is not, until renamed." in to_infra[0]
    assert [m for m in slack.messages if m["channel"] == slack.channel_id("#books-mcp")] == []

    # books drops shelf: retired, and its name stays reserved to books (search still may not have it)
    change(books, {".mcp-watcher.yaml": team_file("shelf-two")})
    assert sync() == ["catalog", "index", "shelf-two"]
    [search_state] = [s for s in sync_repos(central, store).repos if s.git == str(search)]
    assert (
        "was declared by " in search_state.refused["shelf"]
        and "a retired name stays reserved" in (search_state.refused["shelf"])
    )
    # books takes it back: it is books's again
    change(books, {".mcp-watcher.yaml": team_file("shelf-two", "shelf")})
    assert sync() == ["catalog", "index", "shelf", "shelf-two"]
    assert keeper.live.config.server("shelf").team == "books"

    # Every command starts on this state (a duplicate used to stop `status` with "duplicate name").
    assert sorted(s.name for s in effective_config(central, store).config.servers) == [
        "catalog",
        "index",
        "shelf",
        "shelf-two",
    ]
    said = [r.getMessage() for r in caplog.records if r.name == "watcher.repos.sync"]
    assert sum("server 'shelf' belongs to " in line for line in said) == 1  # logged once over four passes
    assert not [r for r in caplog.records if r.exc_info], "no traceback"
    assert main(["--config", str(central.path), "status"]) == 0


def test_two_new_repositories_claiming_one_name_in_one_pass_leave_a_valid_config(tmp_path: Path):
    first = team_repo(tmp_path / "a", "dup", team_file=team_file("dup", "alpha"))
    second = team_repo(tmp_path / "b", "dup", team_file=team_file("dup", "beta"))
    central = central_config(tmp_path, [{"git": str(first), "team": "books"}, {"git": str(second), "team": "infra"}])
    store = Store(tmp_path / "state" / "watcher.db")
    result = sync_repos(central, store)
    # Nobody owns it yet: the first repository read gets it, the other keeps its other server.
    assert sorted(s.name for s in result.config.servers) == ["alpha", "beta", "dup"]
    assert result.config.server("dup").team == "books"
    assert f"also declared in {first}" in result.repos[1].refused["dup"]


def test_commands_that_name_a_server_find_a_team_files_server(tmp_path: Path, capsys):
    """`check` (and every command reading the state) knows a team file's server from the last good sync, and a
    short version becomes the registry's spelling before it is a key."""
    from tests.repos.test_resolve import seen
    from tests.serverset.helpers import baseline_snapshot
    from tests.serverset.helpers import team_repo as mini_repo

    repo = mini_repo(tmp_path / "books-repo", baseline_snapshot(tmp_path / "baseline"), ("shelf", "find_book"))
    central = central_config(tmp_path, [{"git": str(repo), "team": "books"}])
    store = Store(tmp_path / "state" / "watcher.db")
    seen(store, "2.2.0", "2.3.0")
    sync_repos(central, store)
    store.close()
    code = main(["--config", str(central.path), "check", "--server", "shelf", "--sdk-version", "2.3"])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert "2.3 is 2.3.0 on the registry: running 2.3.0" in out.err
    assert "PASS: shelf passes on mcp 2.3.0" in out.out
    store = Store(tmp_path / "state" / "watcher.db")
    [run] = store.runs(server="shelf")
    assert (run["sdk_version"], run["trigger"], run["verdict"]) == ("2.3.0", "cli", "pass")
