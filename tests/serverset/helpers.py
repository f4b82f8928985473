"""A running service with team repositories: real git repositories of stdlib-only MCP servers (no SDK install,
so a run takes seconds), the loopback registry, spec host and Slack, and the team file's pieces."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.fakes.github_server import FakeGitHub
from tests.fakes.registry_server import FIXTURES, FakeRegistry, serve_registry
from tests.fakes.slack_server import FakeSlack
from tests.helpers import SERVICE_CLOCK_START
from tests.repos.helpers import change
from tests.slackapp.helpers import SECRET, sign
from tests.spec.helpers import serve_spec, spec_config
from tests.suites.helpers import new_repo
from watcher.cli import main

MINI = Path(__file__).resolve().parent / "fixtures" / "mini_mcp_server.py"


def central_server(name: str, folder: Path, **more: object) -> dict[str, object]:
    """A central file's server entry: a declared build that succeeds at once; the server itself exits straight
    away (a quick, real "fail")."""
    return {
        "name": name,
        "team": "books",
        "sdk": "python",
        "language": "other",
        "path": str(folder),
        "transport": "stdio",
        "prepare": [["python", "-c", "print('built')"]],
        "start": ["python", "server.py"],
        "baseline_sdk_version": "2.3.0",
        "requirements": [],
        **more,
    }


def server_entry(name: str, tool: str) -> str:
    """One team-file entry: a declared build (no SDK to install) of the mini server offering ``tool``, judged
    against the baseline snapshot committed beside it (taken with the tool `find_book`)."""
    return f"""\
  - name: {name}
    path: {name}
    language: other
    sdk: python
    baseline_sdk_version: "2.3.0"
    transport: stdio
    prepare: [["python3", "-c", "print('built')"]]
    start: [python3, server.py, {tool}]
    requirements: []
    client_profiles: [typical]
    baseline_snapshot: {name}/baseline-snapshot
    timeouts: {{install: 60, start: 30, snapshot: 120}}
"""


def team_file(*entries: str) -> str:
    return "servers:\n" + "".join(entries)


def baseline_snapshot(folder: Path) -> Path:
    """The mini server's contract with the tool `find_book`, taken by `mcp-watcher snapshot` (made once)."""
    if not (folder / "snapshot.json").exists():
        code = main(
            [
                "snapshot",
                "--out",
                str(folder),
                "--client-profile",
                "typical",
                "--timeout",
                "30",
                "--",
                "python3",
                str(MINI),
            ]
        )
        assert code == 0, "the baseline snapshot of the mini server could not be taken"
    return folder


def add_server(repo: Path, name: str, snapshot: Path) -> None:
    """The server's folder in the repository: the mini server and its baseline snapshot (not yet committed)."""
    (repo / name).mkdir(parents=True, exist_ok=True)
    shutil.copy(MINI, repo / name / "server.py")
    shutil.copytree(snapshot, repo / name / "baseline-snapshot", dirs_exist_ok=True)


def team_repo(folder: Path, snapshot: Path, *servers: tuple[str, str]) -> Path:
    repo = new_repo(folder, {"README.md": "a team's servers\n"})
    for name, _tool in servers:
        add_server(repo, name, snapshot)
    change(repo, {".mcp-watcher.yaml": team_file(*(server_entry(n, t) for n, t in servers))}, "the team file")
    return repo


@dataclass
class World:
    registry: FakeRegistry
    gh: FakeGitHub
    slack: FakeSlack
    tmp_path: Path

    def config(self, repos: list[dict[str, Any]], **more: Any) -> Path:
        spec = spec_config(
            self.gh,
            teams=[{"name": "books", "slack_channel": "#books-mcp"}, {"name": "infra", "slack_channel": "#infra-mcp"}],
        )
        data = {
            **spec,
            "state": str(self.tmp_path / "state" / "watcher.db"),
            "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": self.registry.url("pypi/simple")}],
            "slack": {"api_url": self.slack.api_url, "retries": 1},
            "schedule": {
                "poll_minutes": 60,
                "window_poll_minutes": None,
                "spec_poll_minutes": 60,
                "deliver_seconds": 0.5,
                "repos_minutes": 0.05,  # a pass every 3 s: the sync interval the test waits within
                "config_seconds": 1,
            },
            "suites": {
                "on_baseline": False,
                "runs_dir": str(self.tmp_path / "runs"),
                "envs_dir": str(self.tmp_path / "envs"),
                "git_cache_dir": str(self.tmp_path / "git"),
                "git_protocols": ["file"],
            },
            "repos": repos,
            **more,
        }
        (self.tmp_path / "state").mkdir(exist_ok=True)
        path = self.tmp_path / "watcher.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        return path


@contextmanager
def world(tmp_path: Path) -> Iterator[World]:
    root = tmp_path / "registry"
    shutil.copytree(FIXTURES, root)
    with (
        serve_registry(root) as registry,
        FakeGitHub() as gh,
        FakeSlack(token="xoxb-live-test", channels=["#books-mcp", "#infra-mcp", "#ops"]) as slack,
    ):
        serve_spec(gh)
        yield World(registry, gh, slack, tmp_path)


def signed_post(base: str, body: str, started: float) -> httpx.Response:
    """POST /slack/events as Slack does, stamped on the service's pinned clock."""
    stamp = int(datetime.fromisoformat(SERVICE_CLOCK_START).timestamp() + time.time() - started)
    return httpx.post(
        f"{base}/slack/events",
        content=body.encode(),
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": str(stamp),
            "X-Slack-Signature": sign(body, stamp, SECRET),
        },
        timeout=10,
    )
