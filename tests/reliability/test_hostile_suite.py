"""A hostile new version of the conformance suite, end to end: published on the loopback npm registry as a real
`npm pack` tarball, polled by readiness as the watched newest version (installed on purpose, unpinned), run
against every server for its new set, then tried as a candidate beside the pinned version; and the baseline
command installing and running a hostile pinned version.

Its postinstall (at install) and its CLI (at every run) go for the Slack token file (directly and through links
planted in its files), the config, the state database and folder, the runs and environments folders, a host
process's secret in /proc and a service on the host's loopback (tests/reliability/helpers.py). Each test first
reads back the marks they wrote in the one folder each may write — proof that they ran where the attack happens —
then checks that they reached nothing: no token anywhere, the database's tables and the state folder as they were;
that both teams' servers were judged as usual, and that the service still serves.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.registry_server import FakeRegistry, serve_registry
from tests.helpers import start_service
from tests.readiness.helpers import known_sdk, publish
from tests.reliability.helpers import (
    WRITTEN,
    Targets,
    assert_stopped,
    host_secret,
    host_service,
    node_server,
    pack,
    read_mark,
    write_suite,
)
from tests.suites.helpers import CLOSED, ROOT
from watcher.boundary import sandbox
from watcher.config import LoadedConfig, load_config
from watcher.core.clock import START_VARIABLE
from watcher.core.store import Store
from watcher.readiness.cycle import check_readiness
from watcher.readiness.view import KV_RESULTS
from watcher.suites.judge import baseline as baseline_command
from watcher.suites.state import REPORT_FILE

pytestmark = pytest.mark.timeout(600)
TODAY = date(2026, 12, 1)
PINNED, HOSTILE = "1.0.0", "1.1.0"
SETS = {"2025-11-25": ["server-reach"]}


class Deployment:
    """A watcher's folders as deployed (token file, config, state, runs, environments), two teams' servers, a
    host process holding a secret and a host service; the suite versions on the loopback registry."""

    def __init__(self, tmp_path: Path, registry: FakeRegistry, host_port: int, held: tuple[int, str]) -> None:
        self.tmp = tmp_path
        self.registry = registry
        self.token = tmp_path / "secrets" / "slack-token"
        self.token.parent.mkdir()
        self.token_value = "xoxb-hostile-suite-" + os.urandom(6).hex()
        self.token.write_text(self.token_value, encoding="utf-8")
        self.token.chmod(0o600)
        self.config = tmp_path / "watcher.yaml"
        self.state = tmp_path / "state" / "watcher.db"
        self.runs, self.envs = tmp_path / "runs", tmp_path / "envs"
        self.targets = Targets(self.token, self.config, self.state, self.runs, self.envs, *held, host_port)

    def publish(self, versions: dict[str, bool], latest: str) -> None:
        """The suite versions on the registry (version -> hostile?), made with `npm pack`."""
        tarballs = {}
        for version, hostile in versions.items():
            sets = {**SETS, "draft": ["server-reach"]} if version == HOSTILE else SETS
            tree = write_suite(self.tmp / "packages" / version, version, sets, self.targets if hostile else None)
            tarballs[version] = (pack(tree, self.tmp / "tarballs"), "2026-11-20T10:00:00.000Z")
        publish(self.registry.root, tarballs, latest)

    def write_config(self, pinned: str) -> LoadedConfig:
        victim = {**node_server(self.tmp / "src" / "victim", "victim"), "team": "books"}
        victim["expected_failures"] = str(self.tmp / "baselines" / "victim.yml")
        bystander = {**node_server(self.tmp / "src" / "bystander", "bystander"), "team": "search"}
        data = {
            "state": str(self.state),
            "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": f"{CLOSED}/simple/"}],
            "teams": [
                {"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]},
                {"name": "search", "slack_channel": "#search-mcp", "sdks": ["python"]},
            ],
            "slack": {"token_env": None, "token_file": str(self.token), "api_url": f"{CLOSED}/api/"},
            "conformance": {
                "package": f"@modelcontextprotocol/conformance@{pinned}",
                "npm_registry": self.registry.base,
            },
            "servers": [victim, bystander],
            "suites": {"runs_dir": str(self.runs), "envs_dir": str(self.envs), "sandbox": "bubblewrap"},
        }
        self.state.parent.mkdir(parents=True, exist_ok=True)
        self.config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        return load_config(self.config, base_dir=ROOT)

    def tables(self) -> set[str]:
        with sqlite3.connect(self.state) as db:
            return {row[0] for row in db.execute("select name from sqlite_master where type='table'")}

    def state_folder(self) -> set[str]:
        return {p.name for p in self.state.parent.iterdir() if not p.name.startswith(self.state.name)}

    def install_mark(self, version: str) -> dict[str, str]:
        """The postinstall's mark, in the install folder of `version` (the one folder it may write)."""
        for marker in (self.envs / "_tools").glob("conformance-*/mcp-watcher-tool.json"):
            if json.loads(marker.read_text(encoding="utf-8"))["version"] == version:
                return read_mark(marker.parent / "attack-postinstall.json")
        raise AssertionError(f"suite {version} was not installed")

    def assert_reached_nothing(self, tables: set[str], state_folder: set[str]) -> None:
        assert "pwned" not in self.tables() and self.tables() == tables
        assert self.state_folder() == state_folder
        for folder in (self.runs, self.envs):
            assert not (folder / "pwned.txt").exists()
        # The token is in no file the watcher or the suite wrote: reports, results, logs, installs, the state.
        for folder in (self.runs, self.envs, self.state.parent):
            for path in folder.rglob("*"):
                if path.is_file() and not path.is_symlink():
                    assert self.token_value.encode() not in path.read_bytes(), path


@pytest.fixture
def deployment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Deployment]:
    if not sandbox.choose("bubblewrap").active:
        pytest.skip(f"the run boundary cannot be had here: {sandbox.choose('bubblewrap').reason}")
    monkeypatch.setenv(START_VARIABLE, "2026-12-01T09:00:00Z")
    with serve_registry(tmp_path / "registry") as registry, host_service() as port, host_secret() as held:
        yield Deployment(tmp_path, registry, port, held)


def _report(run_dir: str | Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((Path(run_dir) / REPORT_FILE).read_text(encoding="utf-8"))
    return report


def test_readiness_and_the_candidate_comparison_run_a_hostile_new_suite_version_in_rooms(deployment: Deployment):
    deployment.publish({PINNED: False, HOSTILE: True}, latest=HOSTILE)
    loaded = deployment.write_config(PINNED)
    expected = deployment.tmp / "baselines" / "victim.yml"  # the victim's committed expected failures: none
    expected.parent.mkdir()
    expected.write_text("server: []\n", encoding="utf-8")
    store = Store(deployment.state)
    known_sdk(store)
    tables, state_folder = deployment.tables(), deployment.state_folder()

    summary = check_readiness(loaded, store, today=TODAY)

    assert summary["suite_version"] == HOSTILE, summary
    assert list(summary["sets"]) == ["draft"], summary
    # 1. Its postinstall ran, in the install room: every attack failed.
    mark = deployment.install_mark(HOSTILE)
    assert_stopped(mark)
    # Its write into the environments folder: as root the room's uid 65534 cannot write the folders bwrap made on
    # the way to its install folder (root's); as an unprivileged watcher the room's user owns them, and the file
    # lands on the room's own /tmp tmpfs (assert_stopped checked where), never in the host's folder.
    assert mark["envs"].startswith("STOPPED" if os.geteuid() == 0 else WRITTEN), mark["envs"]
    # 2. Its CLI ran against each server for the new set, in a room whose one port leads to that server.
    results = store.get_kv(KV_RESULTS)["draft"]["servers"]
    for name in ("victim", "bystander"):
        entry = results[name]
        assert entry["status"] == "ready" and entry["suite_version"] == HOSTILE, entry
        step = _report(entry["run_dir"])["step"]
        assert step["room"].startswith("bubblewrap room (network: one forwarded port"), step
        cli = read_mark(Path(entry["run_dir"]) / "step" / "results" / "attack-cli.json")
        assert_stopped(cli, "planted_link")
    # 3. The candidate comparison ran it again beside the pinned version, for the sets the servers run.
    assert sorted(c["server"] for c in summary["candidate"]) == ["bystander", "victim"], summary
    assert all(c["differences"] == [] for c in summary["candidate"]), summary
    for name in ("victim", "bystander"):
        [candidate] = deployment.runs.glob(f"{name}/*/step/candidate/2025-11-25")
        assert_stopped(read_mark(candidate / "results" / "attack-cli.json"), "planted_link")
        step = _report(candidate.parents[2])["step"]
        assert [r["ok"] for r in step["pinned"] + step["candidate"]] == [True, True], step
        assert all(r["room"].startswith("bubblewrap room") for r in step["pinned"] + step["candidate"]), step
    # 4. It reached nothing, and the service starts on the same state and serves both teams' results.
    deployment.assert_reached_nothing(tables, state_folder)
    service = start_service(deployment.config, {}, deployment.tmp / "service.log")
    try:
        service.wait_http(timeout=60)
        page = service.get("/readiness")
        assert page.status_code == 200
        assert 'data-server="victim" data-status="ready"' in page.text
        assert 'data-server="bystander" data-status="ready"' in page.text
    finally:
        service.stop()


def test_the_baseline_command_installs_and_runs_a_hostile_pinned_suite_in_rooms(deployment: Deployment):
    deployment.publish({HOSTILE: True}, latest=HOSTILE)
    deployment.write_config(HOSTILE)
    Store(deployment.state)
    tables, state_folder = deployment.tables(), deployment.state_folder()

    code = baseline_command.main(["--config", str(deployment.config), "--server", "victim", "--only", "failures"])

    assert code == 0
    written = yaml.safe_load((deployment.tmp / "baselines" / "victim.yml").read_text(encoding="utf-8"))
    assert written == {"server": []}  # the server answered: nothing fails, nothing to excuse
    assert_stopped(deployment.install_mark(HOSTILE))
    [cli] = deployment.runs.glob("victim/*/conformance/2025-11-25/results/attack-cli.json")
    assert_stopped(read_mark(cli), "planted_link")
    deployment.assert_reached_nothing(tables, state_folder)
