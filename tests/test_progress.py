"""Long commands show their stages: a live display on a terminal (a real pty here), plain lines in a pipe,
nothing extra with --json. `eval` without its API key is the quick real case (it reads its tasks, then
stops, saying why); `snapshot` of the repository's scoped server is another."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import yaml

from watcher.core import progress

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "examples" / "library"


def _config(tmp_path: Path) -> Path:
    data = {
        "state": "watcher.db",
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": "http://127.0.0.1:9/simple/"}],
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
        "servers": [
            {
                "name": "library",
                "team": "books",
                "sdk": "python",
                "language": "python",
                "path": str(LIBRARY),
                "transport": "http",
                "start": ["python", "-m", "library_server", "--port", "{port}"],
                "baseline_sdk_version": "2.3.0",
                "evaluation": {"tasks": "eval-tasks.yaml", "model": "claude-sonnet-4-5"},
            }
        ],
        "suites": {"runs_dir": "runs", "envs_dir": "envs"},
    }
    path = tmp_path / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "MCP_WATCHER_CONFIG")}
    return {**env, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "COLUMNS": "120"}


EVAL = ["eval", "--server", "library", "--sdk-version", "2.4.0b1"]


def test_plain_lines_in_a_pipe_and_nothing_extra_with_json(tmp_path: Path):
    config = _config(tmp_path)
    base = [sys.executable, "-m", "watcher.cli", "--config", str(config)]
    plain = subprocess.run([*base, *EVAL], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert "eval: [  0.0 s] reading the tasks (eval-tasks.yaml)" in plain.stderr
    assert "\x1b[" not in plain.stderr, "no terminal codes in a pipe"
    assert plain.stdout.startswith("SKIPPED"), plain.stdout

    quiet = subprocess.run(
        [*base, *EVAL, "--json"], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert "reading the tasks" not in quiet.stderr
    assert json.loads(quiet.stdout)["verdict"] == "skipped"


def test_a_live_display_on_a_terminal(tmp_path: Path):
    config = _config(tmp_path)
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "watcher.cli", "--config", str(config), *EVAL],
        cwd=tmp_path,
        env=_env(),
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        start_new_session=True,
    )
    os.close(secondary)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], 0.5)
        if ready:
            try:
                data = os.read(primary, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(primary)
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert "✓" in screen and "reading the tasks (eval-tasks.yaml)" in screen, screen
    assert "eval: [" not in screen, "the terminal gets the live display, not the plain lines"
    assert "SKIPPED" in screen


def test_no_display_without_a_command_turning_it_on_and_stages_in_order():
    progress.stage("nobody is listening")  # no display: nothing happens, nothing fails
    out = io.StringIO()
    with progress.showing("work", stream=out):
        progress.stage("one")
        progress.stage("two")
    progress.stage("after")
    lines = out.getvalue().splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == ["one", "two"]


def test_run_once_shows_its_stages_in_plain_lines_and_none_beside_json_logs(tmp_path: Path):
    closed = "http://127.0.0.1:9"
    data = {
        "state": "watcher.db",
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": closed + "/simple/"}],
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
        "spec": {"registry_url": closed + "/deprecated.mdx", "github_api_url": closed},
        "http_client": {"timeout_seconds": 2, "retries": 0, "backoff_seconds": 0},
    }
    env = {**_env(), "MCP_WATCHER_CLOCK_START": "2026-12-03T12:00:00Z"}
    for as_json in (False, True):
        config = tmp_path / f"{as_json}.yaml"
        config.write_text(yaml.safe_dump({**data, "state": f"{as_json}.db", "log": {"json": as_json}}))
        done = subprocess.run(
            [sys.executable, "-m", "watcher.cli", "--config", str(config), "run", "--once"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode in (1, 3), done.stderr  # the sources are closed: jobs ran, reported failures
        if as_json:
            assert lines
            for line in lines:
                json.loads(line)  # every line one JSON object: no progress line among them
        else:
            assert any(line.startswith("run --once: [") and "polling 1 SDK source(s)" in line for line in lines), lines
            assert any("reading the spec's deprecated features" in line for line in lines)
