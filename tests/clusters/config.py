"""A configuration of several teams, each with servers on the python SDK, its release notes on a loopback
GitHub (the fake registry serving tests/fixtures/registries/github/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.backtest.helpers import FIXTURES as BACKTEST_FIXTURES
from tests.backtest.helpers import ROOT
from watcher.config import LoadedConfig, load_config

CLUSTER_FIXTURES = Path(__file__).resolve().parent / "fixtures"

SERVERS: dict[str, tuple[str, Path, list[str]]] = {
    # name: (team, project folder, start command) — written against mcp 1.x, unless said otherwise
    "notes-1x": ("books", BACKTEST_FIXTURES / "fastmcp_server", ["python", "-m", "fastmcp_notes", "--port", "{port}"]),
    "weather": ("forecasts", CLUSTER_FIXTURES / "weather_src", ["python", "-m", "weather_tools", "--port", "{port}"]),
    "todo": ("planning", CLUSTER_FIXTURES / "todo_flat", ["python", "-m", "todo_server", "--port", "{port}"]),
    "ledger": ("accounts", CLUSTER_FIXTURES / "ledger_server", ["python", "-m", "ledger_server", "--port", "{port}"]),
}
"""`ledger` is broken for its own reason (a module it does not ship)."""


def server_entry(name: str, team: str, project: Path, start: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "team": team,
        "sdk": "python",
        "language": "python",
        "path": str(project),
        "transport": "http",
        "start": start,
        "baseline_sdk_version": "1.27.2",
        "requirements": [],
        "timeouts": {"install": 300, "start": 30, "suite": 120, "snapshot": 120},
    }


def write_cluster_config(
    folder: Path,
    registry_base: str,
    *,
    threshold: int = 3,
    notes: dict[str, Any] | None = None,
    extra_servers: dict[str, tuple[str, Path, list[str]]] | None = None,
    envs_dir: Path | None = None,
    public_url: str | None = None,
) -> LoadedConfig:
    servers = {**SERVERS, **(extra_servers or {})}
    teams = sorted({team for team, _, _ in servers.values()})
    release_notes = notes if notes is not None else {"repo": "modelcontextprotocol/python-sdk", "tag": "v{version}"}
    (folder / "state").mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {
        "state": str(folder / "state" / "watcher.db"),
        "sdks": [
            {
                "name": "python",
                "registry": "pypi",
                "package": "mcp",
                "url": f"{registry_base}/pypi/simple",
                **({"release_notes": {**release_notes, "api_url": f"{registry_base}/github"}} if release_notes else {}),
            }
        ],
        "teams": [{"name": t, "slack_channel": f"#{t}-mcp", "sdks": ["python"]} for t in teams],
        "slack": {"operators_channel": "#mcp-platform"},
        "spec": {"github_api_url": f"{registry_base}/github"},
        "http_client": {"retries": 0},
        "servers": [server_entry(name, *spec) for name, spec in servers.items()],
        "clusters": {"threshold_teams": threshold},
        "suites": {"runs_dir": str(folder / "runs"), "envs_dir": str(envs_dir or folder / "envs")},
    }
    if public_url:
        data["http"] = {"public_url": public_url}
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_config(path, base_dir=ROOT)
