"""Team repositories made with git in the test, and a central config that lists them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.suites.helpers import commit_all, git, new_repo
from watcher.config import LoadedConfig, load_config

TEAM_FILE = """\
servers:
  - name: {name}
    path: server
    start: [python, server.py]
    requirements: ["2026-07-28"]
"""
PYPROJECT = '[project]\nname = "{name}"\nversion = "0.1.0"\ndependencies = ["mcp=={version}", "httpx>=0.27"]\n'


def team_repo(folder: Path, name: str, version: str = "1.26.0", team_file: str | None = None) -> Path:
    """A repository with a Python server in server/ and its team file at the root."""
    return new_repo(
        folder,
        {
            ".mcp-watcher.yaml": team_file if team_file is not None else TEAM_FILE.format(name=name),
            "server/pyproject.toml": PYPROJECT.format(name=name, version=version),
            "server/server.py": "print('hello')\n",
        },
    )


def change(repo: Path, files: dict[str, str | None], message: str = "change") -> str:
    """Write (or, for None, delete) files and commit; returns the new commit."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    commit_all(repo, message)
    return git(repo, "rev-parse", "HEAD")


def central_config(
    folder: Path, repos: list[dict[str, Any]], servers: list[dict[str, Any]] | None = None, **more: Any
) -> LoadedConfig:
    data = {
        "state": str(folder / "state" / "watcher.db"),
        "sdks": [
            {"name": "python", "registry": "pypi", "package": "mcp"},
            {"name": "typescript", "registry": "npm", "package": "@modelcontextprotocol/sdk"},
        ],
        "teams": [
            {"name": "books", "slack_channel": "#books-mcp"},
            {"name": "infra", "slack_channel": "#infra-mcp"},
        ],
        "servers": servers or [],
        "repos": repos,
        "suites": {
            "runs_dir": str(folder / "runs"),
            "git_cache_dir": str(folder / "git"),
            "git_protocols": ["https", "ssh", "file", "http"],  # local paths and the loopback git host
        },
        **more,
    }
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_config(path, base_dir=folder)
