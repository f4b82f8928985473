"""Shared fixtures: a local Slack, a temporary state folder, and config files written on the fly."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.fakes.slack_server import FakeSlack

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(token="xoxb-test-token", channels=["#books-mcp", "#ops", "#infra-mcp"]) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _no_real_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests decide for themselves whether Slack credentials exist.
    for name in ("SLACK_BOT_TOKEN", "SLACK_WEBHOOK_URL", "GITHUB_TOKEN", "MCP_WATCHER_CONFIG"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def write_config(tmp_path: Path):
    """write_config(dict) → path of a YAML config in tmp_path whose state lives in tmp_path too."""

    def write(data: dict, name: str = "watcher.yaml") -> Path:
        data = {"state": str(tmp_path / "state" / "watcher.db"), **data}
        path = tmp_path / name
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    return write


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
