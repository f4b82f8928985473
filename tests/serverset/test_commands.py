"""Every command that names a server finds a team file's server from the last good sync the state records (the
central file does not list it): `eval`, `backtest` and the baseline command, each with a version typed short
(`2.3` is `2.3.0` on the registry). The baseline command checks the team's repository out at the commit in use
and writes the baselines inside that checkout. Real git repositories, the loopback registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.repos.test_resolve import seen
from tests.serverset.helpers import baseline_snapshot, team_repo, world
from watcher.cli import main
from watcher.config import load_config
from watcher.core.store import Store
from watcher.repos.sync import sync_repos
from watcher.suites.judge import baseline

pytestmark = [pytest.mark.timeout(300)]


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    return baseline_snapshot(tmp_path / "baseline")


def test_eval_backtest_and_baseline_find_a_team_files_server(tmp_path: Path, snapshot: Path, capsys):
    with world(tmp_path) as w:
        repo = team_repo(tmp_path / "books-repo", snapshot, ("shelf", "find_book"))
        path = w.config([{"git": str(repo), "team": "books"}])
        central = load_config(path)
        assert [s.name for s in central.config.servers] == []  # only the team file declares shelf
        store = Store(tmp_path / "state" / "watcher.db")
        seen(store, "2.2.0", "2.3.0")
        sync_repos(central, store)
        store.close()
        capsys.readouterr()

        # eval: found, the version in the registry's spelling; it then stops at what the server lacks (no
        # evaluation set), an answer about shelf, not "no server named".
        code = main(["--config", str(path), "eval", "--server", "shelf", "--sdk-version", "2.3", "--json"])
        out = capsys.readouterr()
        assert "Traceback" not in out.err
        assert "no server named" not in out.out + out.err
        report = json.loads(out.out)
        assert (report["server"], report["candidate_version"], report["baseline_version"]) == (
            "shelf",
            "2.3.0",
            "2.3.0",
        )
        assert code == 2 and "no evaluation set declared for shelf" in out.out

        # backtest: the versions published in the window, each run on shelf as the team file defines it
        code = main(
            ["--config", str(path), "backtest", "--server", "shelf", "--since", "2026-10-01", "--until", "2026-10-05"]
            + ["--json"]
        )
        out = capsys.readouterr()
        assert "Traceback" not in out.err
        assert code == 0, out.out + out.err
        answer = json.loads(out.out)
        assert answer["server"] == "shelf" and answer["status"] == "done"
        [version] = answer["versions"]  # 2.3.0, published 2026-10-02
        assert version["version"] == "2.3.0" and version["verdict"] == "pass", version

        # the baseline command: checks the repository out at the commit in use, writes the snapshot there
        code = baseline.main(["--config", str(path), "--server", "shelf", "--sdk-version", "2.3", "--only", "snapshot"])
        out = capsys.readouterr()
        assert "Traceback" not in out.err
        assert code == 0, out.out + out.err
        [wrote] = [line.removeprefix("wrote ") for line in out.out.splitlines() if line.startswith("wrote ")]
        written = Path(wrote)
        assert written.parts[-3:] == ("source", "shelf", "baseline-snapshot") and (written / "snapshot.json").exists()
        assert written.is_relative_to(tmp_path / "runs" / "shelf")  # in the run's checkout, not the central folder
        assert f"in a checkout of {repo} at " in out.out and "commit them there" in out.out
        assert not (tmp_path / "shelf").exists()


def test_poll_with_suites_runs_a_team_files_server(tmp_path: Path, snapshot: Path):
    """`poll --suites` queues and drains runs for the servers in force, a team file's included: the first poll
    of an SDK (`suites.on_baseline`) runs every server of it on the newest version, here shelf on 2.3.0."""
    with world(tmp_path) as w:
        repo = team_repo(tmp_path / "books-repo", snapshot, ("shelf", "find_book"))
        suites = {
            "on_baseline": True,
            "runs_dir": str(tmp_path / "runs"),
            "envs_dir": str(tmp_path / "envs"),
            "git_cache_dir": str(tmp_path / "git"),
            "git_protocols": ["file"],
        }
        path = w.config([{"git": str(repo), "team": "books"}], suites=suites)
        store = Store(tmp_path / "state" / "watcher.db")
        sync_repos(load_config(path), store)
        store.close()
        done = run_cli(path, "poll", "--suites", "--no-deliver", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["queued_runs"] == ["shelf@2.3.0"]
        assert "Traceback" not in done.stderr
        store = Store(tmp_path / "state" / "watcher.db")
        [run] = store.runs(server="shelf")
        store.close()
        assert (run["status"], run["sdk_version"], run["verdict"]) == ("done", "2.3.0", "pass"), run["report"]
