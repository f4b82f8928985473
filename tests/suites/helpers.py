"""Shared pieces for the suite tests: config files written on the fly, fixture servers, PID checks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from watcher.config import LoadedConfig, load_config

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
LIBRARY = ROOT / "examples" / "library"
LIBRARY_TS = ROOT / "examples" / "library-ts"
CONFORMANCE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
CLOSED = "http://127.0.0.1:9"
"""Nothing listens on the discard port on loopback: a registry read there fails at once."""


def library_server(**overrides: Any) -> dict[str, Any]:
    server = {
        "name": "library",
        "team": "books",
        "sdk": "python",
        "language": "python",
        "path": str(LIBRARY),
        "transport": "http",
        "start": ["python", "-m", "library_server", "--port", "{port}"],
        "baseline_sdk_version": "2.3.0",
        "baseline_snapshot": str(LIBRARY / "baseline-snapshot"),
        "requirements": ["2026-07-28", "2025-11-25"],
        "expected_failures": str(LIBRARY / "conformance-baseline.yml"),
        "timeouts": {"install": 300, "start": 60, "suite": 300, "snapshot": 60},
    }
    return {**server, **overrides}


def library_ts_server(**overrides: Any) -> dict[str, Any]:
    server = {
        "name": "library-ts",
        "team": "books",
        "sdk": "typescript",
        "language": "typescript",
        "path": str(LIBRARY_TS),
        "transport": "http",
        "start": ["node", "src/server.js", "--port", "{port}"],
        "baseline_sdk_version": "1.32.2",
        "baseline_snapshot": str(LIBRARY_TS / "baseline-snapshot"),
        "requirements": ["2025-11-25"],
        "expected_failures": str(LIBRARY_TS / "conformance-baseline.yml"),
        "timeouts": {"install": 300, "start": 60, "suite": 300, "snapshot": 60},
    }
    return {**server, **overrides}


def fixture_server(name: str, project: str, start: list[str], **overrides: Any) -> dict[str, Any]:
    """A server built from one of this folder's fixture projects (Python, on `mcp`)."""
    server = {
        "name": name,
        "team": "books",
        "sdk": "python",
        "language": "python",
        "path": str(FIXTURES / project),
        "transport": "http",
        "start": start,
        "baseline_sdk_version": "2.3.0",
        "requirements": [],
        "timeouts": {"install": 300, "start": 30, "suite": 120, "snapshot": 120},
    }
    return {**server, **overrides}


def write_config(folder: Path, servers: list[dict[str, Any]], envs_dir: Path, **suites: Any) -> LoadedConfig:
    """A config in `folder` whose state and runs live there; environments are shared via `envs_dir`."""
    (folder / "state").mkdir(parents=True, exist_ok=True)  # a configured state's folder must exist
    data = {
        "state": str(folder / "state" / "watcher.db"),
        # Registries on a closed loopback port: `check` cannot confirm a version there and goes ahead (hermetic).
        "sdks": [
            {"name": "python", "registry": "pypi", "package": "mcp", "url": f"{CLOSED}/simple/"},
            {"name": "typescript", "registry": "npm", "package": "@modelcontextprotocol/sdk", "url": f"{CLOSED}/"},
        ],
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python", "typescript"]}],
        "conformance": {"package": CONFORMANCE},
        "servers": servers,
        "suites": {"runs_dir": str(folder / "runs"), "envs_dir": str(envs_dir), **suites},
    }
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_config(path, base_dir=ROOT)


def process_running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (a reaped-later zombie has already stopped running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def checks_file(
    folder: Path, scenario: str, checks: list[dict[str, Any]], stamp: str = "2026-11-29T10-00-00-000Z"
) -> Path:
    """Write a result folder the way the conformance CLI lays it out (server-<scenario>-<timestamp>)."""
    target = folder / f"server-{scenario}-{stamp}"
    target.mkdir(parents=True, exist_ok=True)
    path = target / "checks.json"
    path.write_text(json.dumps(checks), encoding="utf-8")
    return path


def check(cid: str, status: str, message: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": cid, "name": cid, "description": cid, "status": status, "timestamp": "t"}
    if message:
        entry["errorMessage"] = message
    return entry


# --- local git repositories made with the real `git` CLI, for the source tests -------------------------

_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_AUTHOR_DATE": "2026-11-01T12:00:00Z",
    "GIT_COMMITTER_DATE": "2026-11-01T12:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=_ENV, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def new_repo(folder: Path, files: dict[str, str] | None = None, copy_from: Path | None = None, into: str = "") -> Path:
    """A repository at `folder` on branch main with one commit of `files` (and a copy of `copy_from` at `into`)."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "--quiet", "--initial-branch", "main")
    if copy_from is not None:
        shutil.copytree(
            copy_from,
            folder / into if into else folder,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", ".venv", "node_modules"),
        )
    for name, text in (files or {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return commit_all(folder, "initial")


def commit_all(repo: Path, message: str) -> Path:
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", message)
    return repo


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD")


def bare_clone(repo: Path, dest: Path) -> Path:
    subprocess.run(
        ["git", "clone", "--quiet", "--bare", str(repo), str(dest)], env=_ENV, check=True, capture_output=True
    )
    return dest
