"""Class 3: `run --once` reports by its exit status whether every job did its work."""

from __future__ import annotations

from pathlib import Path

from tests.spec.helpers import spec_config
from watcher.cli import main


def once_config(world: dict, write_config, tmp_path: Path) -> Path:
    spec = spec_config(world["gh"], teams=[{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}])
    return write_config(
        {
            **spec,
            "sdks": [
                {"name": "python", "registry": "pypi", "package": "mcp", "url": world["registry"].url("pypi/simple")}
            ],
            "slack": {"api_url": world["slack"].api_url, "retries": 0},
            "http_client": {"timeout_seconds": 2, "retries": 0, "backoff_seconds": 0},
            "suites": {"runs_dir": str(tmp_path / "runs"), "envs_dir": str(tmp_path / "envs")},
            "http": {"enabled": False},
        }
    )


def test_run_once_exit_status(world, write_config, tmp_path, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", world["slack"].token)
    config = once_config(world, write_config, tmp_path)
    assert main(["--config", str(config), "run", "--once"]) == 0, "every job ran, every source read"

    world["registry"].fail("/pypi/simple/mcp/", status=503)
    assert main(["--config", str(config), "run", "--once"]) == 1, "every SDK source failed: the poll job failed"

    world["registry"].clear_faults()
    world["gh"].stop()  # the spec side is down; the SDK poll still works
    assert main(["--config", str(config), "run", "--once"]) == 3, "jobs ran, but a source could not be read"
