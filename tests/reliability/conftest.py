"""Fixtures for the hostile-conditions tests: a copy of the recorded registries on a local server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.mcp_history import MCP_PAGE, McpHistory
from tests.fakes.registry_server import FIXTURES, FakeRegistry, serve_registry


@pytest.fixture
def registry_root(tmp_path: Path) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(FIXTURES, root)
    return root


@pytest.fixture
def registry(registry_root: Path) -> Iterator[FakeRegistry]:
    with serve_registry(registry_root) as server:
        yield server


@pytest.fixture
def history(registry_root: Path) -> McpHistory:
    return McpHistory(registry_root / MCP_PAGE)


def python_only(registry: FakeRegistry, slack: dict | None = None, **extra: object) -> dict:
    return {
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": registry.url("pypi/simple")}],
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
        "slack": {"retries": 1, "timeout_seconds": 5, **(slack or {})},
        "http_client": {"timeout_seconds": 2, "retries": 0, "backoff_seconds": 0},
        **extra,
    }
