"""One service per state: a second `run` on the same state refuses, naming the holder; a crash frees it.
And a `state:` whose folder does not exist is an error, not a new empty state."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import free_port, start_service, wait_until
from tests.helpers import run_cli as _cli
from watcher.core.instance import lock_path


def _config(write_config, closed: str) -> Path:
    return write_config(
        {
            "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": closed + "/simple/"}],
            "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
            "spec": {"registry_url": closed + "/deprecated.mdx", "github_api_url": closed},
            "schedule": {"poll_minutes": 60, "spec_poll_minutes": 60},
            "http_client": {"timeout_seconds": 1, "retries": 0, "backoff_seconds": 0},
        }
    )


def test_a_second_run_on_the_same_state_refuses_naming_the_pid_and_a_crash_leaves_no_stale_lock(
    write_config, tmp_path: Path
):
    config = _config(write_config, f"http://127.0.0.1:{free_port()}")
    state = tmp_path / "state" / "watcher.db"
    first = start_service(config, {}, tmp_path / "first.log")
    try:
        first.wait_http()
        assert lock_path(state).read_text().strip() == str(first.process.pid)

        second = _cli(config, "run", "--port", str(free_port()))
        assert second.returncode == 2
        assert f"another mcp-watcher run (PID {first.process.pid}) is using this state" in second.stderr
        assert "mcp-watcher running" not in second.stderr, "the second one must not start its jobs"
    finally:
        first.kill_hard()  # a crash: SIGKILL, nothing cleans up
    wait_until(lambda: first.process.poll() is not None, message="the first service gone")

    third = _cli(config, "run", "--once")
    assert "is using this state" not in third.stderr
    assert third.returncode in (0, 1, 3), third.stderr  # the registries are closed: the polls fail, reported
    assert "run --once" in third.stderr


def test_a_state_folder_that_does_not_exist_is_an_error_not_a_new_empty_state(tmp_path: Path):
    config = tmp_path / "watcher.yaml"
    config.write_text("state: stat/watcher.db\nsdks: []\nteams: []\n")  # a typo of state/
    (tmp_path / "state").mkdir()
    for args in (["status"], ["run", "--once"], ["outbox"]):
        result = _cli(config, *args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert f"the folder {tmp_path / 'stat'} does not exist" in result.stderr
    assert not (tmp_path / "stat").exists()

    default = tmp_path / "default"
    default.mkdir()
    (default / "watcher.yaml").write_text("sdks: []\nteams: []\n")  # no `state:`: the default folder is made
    result = _cli(default / "watcher.yaml", "status")
    assert result.returncode == 0, result.stderr
    assert (default / "state" / "watcher.db").is_file()
