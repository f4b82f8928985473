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


def test_a_failed_source_is_reported_under_the_poll_job_that_read_it(world, write_config, tmp_path, monkeypatch, capfd):
    # Calendar-aware polling: python is the window source; typescript and go are polled by the other job.
    import yaml

    monkeypatch.setenv("SLACK_BOT_TOKEN", world["slack"].token)
    config = once_config(world, write_config, tmp_path)
    data = yaml.safe_load(config.read_text())
    data["sdks"].append(
        {
            "name": "typescript",
            "registry": "npm",
            "package": "@modelcontextprotocol/sdk",
            "url": world["registry"].url("npm"),
        }
    )
    data["sdks"].append(
        {
            "name": "go",
            "registry": "goproxy",
            "package": "github.com/modelcontextprotocol/go-sdk",
            "url": world["registry"].url("goproxy"),
        }
    )
    data["schedule"] = {"window_sdks": ["python"], "window_poll_minutes": 5}
    config.write_text(yaml.safe_dump(data))
    world["registry"].fail("/goproxy/github.com/modelcontextprotocol/go-sdk/@v/list", status=503)
    assert main(["--config", str(config), "run", "--once"]) == 3
    logged = capfd.readouterr()
    incomplete = [line for line in (logged.out + logged.err).splitlines() if " incomplete: " in line]
    assert any("run --once: poll_sdks incomplete: go:" in line for line in incomplete), incomplete
    assert not any("poll_window_sdks" in m for m in incomplete), incomplete
