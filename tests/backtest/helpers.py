"""Shared pieces of the backtest tests: a short real history of `mcp` on the loopback registry, the two
fixture servers, and a config pointing the SDK source at the loopback registry."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from packaging.utils import parse_sdist_filename, parse_wheel_filename
from packaging.version import Version

from tests.fakes.mcp_history import MCP_PAGE
from tests.fakes.registry_server import FIXTURES as REGISTRY_FIXTURES
from watcher.config import LoadedConfig, load_config

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CLOCK_START = "2026-12-01T12:00:00Z"
SHORT_HISTORY = ("1.27.2", "2.0.0a1", "2.0.0b1", "2.0.0rc1", "2.0.0")
"""The 1.x final the team was on, then the 2.0 line's first alpha, beta, RC and the final (real dates)."""
SINCE, UNTIL = "2026-05-01", "2026-08-31"


def _version(filename: str) -> Version:
    return parse_wheel_filename(filename)[1] if filename.endswith(".whl") else parse_sdist_filename(filename)[1]


def write_history(root: Path, versions: Iterable[str] = SHORT_HISTORY) -> Path:
    """The recorded PyPI page of `mcp` with only `versions` left in it, served from `root`."""
    keep = {Version(v) for v in versions}
    data = json.loads((REGISTRY_FIXTURES / MCP_PAGE).read_text())
    data["versions"] = [v for v in data["versions"] if Version(v) in keep]
    data["files"] = [f for f in data["files"] if _version(f["filename"]) in keep]
    page = root / MCP_PAGE
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(json.dumps(data))
    return page


def notes_server(name: str, project: str, module: str, **overrides: Any) -> dict[str, Any]:
    server = {
        "name": name,
        "team": "books",
        "sdk": "python",
        "language": "python",
        "path": str(FIXTURES / project),
        "transport": "http",
        "start": ["python", "-m", module, "--port", "{port}"],
        "baseline_sdk_version": "1.27.2",
        "requirements": [],
        "timeouts": {"install": 300, "start": 30, "suite": 120, "snapshot": 120},
    }
    return {**server, **overrides}


def fastmcp_server(**overrides: Any) -> dict[str, Any]:
    """Written for mcp 1.x: `from mcp.server.fastmcp import FastMCP`."""
    return notes_server("notes-1x", "fastmcp_server", "fastmcp_notes", **overrides)


def either_server(**overrides: Any) -> dict[str, Any]:
    """Imports 2.x's MCPServer and falls back to 1.x's FastMCP: it starts under both."""
    return notes_server("notes-both", "either_server", "either_notes", **overrides)


def write_config(
    folder: Path, registry_url: str, servers: list[dict[str, Any]], envs_dir: Path, **suites: Any
) -> LoadedConfig:
    (folder / "state").mkdir(parents=True, exist_ok=True)
    data = {
        "state": str(folder / "state" / "watcher.db"),
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": registry_url}],
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
        "servers": servers,
        "suites": {"runs_dir": str(folder / "runs"), "envs_dir": str(envs_dir), **suites},
    }
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_config(path, base_dir=ROOT)


def day(text: str) -> datetime:
    return datetime.fromisoformat(text)
