"""`snapshot` mistakes are usage errors before anything starts; a snapshot that read nothing is not "written";
the watcher's own Slack token given by name points to a profile (docs/snapshot.md's Slack example)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.contract.helpers import ROOT, run_cli

SCOPED = ROOT / "tests" / "contract" / "fixtures" / "scoped_server.py"


def _cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    child = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "MCP_WATCHER_PROFILE_"))}
    child.update(env, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "watcher.cli", *args], cwd=cwd, env=child, capture_output=True, text=True, timeout=120
    )


def test_a_command_that_does_not_exist_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["snapshot", "--out", str(tmp_path / "s"), "--", "no-such-server-xyz", "--stdio"]) == 2
    captured = capsys.readouterr()
    assert "no-such-server-xyz: command not found on PATH" in captured.err
    assert "snapshot written" not in captured.out + captured.err
    assert run_cli(["snapshot", "--out", str(tmp_path / "s"), "--", "./missing.py"]) == 2
    assert "./missing.py: no such executable file" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_a_snapshot_that_read_no_era_does_not_say_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    code = run_cli(["snapshot", "--out", str(tmp_path / "s"), "--timeout", "20", "--", sys.executable, str(SCOPED)])
    captured = capsys.readouterr()
    assert code == 1
    assert "snapshot written" not in captured.out
    assert "no era could be read" in captured.err


def test_the_docs_slack_example_the_watchers_own_token_by_name_points_to_a_profile(tmp_path: Path):
    refused = _cli(
        ["snapshot", "--out", "snap/slack", "--env-from", "SLACK_BOT_TOKEN", "--", sys.executable, str(SCOPED)],
        tmp_path,
        SLACK_BOT_TOKEN="xoxb-server-own-123456",
    )
    assert refused.returncode == 2
    assert "SLACK_BOT_TOKEN is one of the watcher's own secret variables" in refused.stderr
    assert "--profile NAME" in refused.stderr and "xoxb-server-own-123456" not in refused.stderr

    # The docs' way (a profile), mirrored on the repository's scoped server, which needs its token to start.
    done = _cli(
        ["snapshot", "--out", "snap/slack", "--timeout", "30", "--profile", "SLACK", "--", sys.executable, str(SCOPED)],
        tmp_path,
        SLACK_BOT_TOKEN="xoxb-watcher-own-654321",
        MCP_WATCHER_PROFILE_SLACK="env SCOPED_API_TOKEN=tok-example-123456\nenv SLACK_BOT_TOKEN=xoxb-server-own-123456",
    )
    assert done.returncode == 0, done.stderr
    assert "snapshot written to snap/slack" in done.stdout
    assert (tmp_path / "snap" / "slack" / "modern" / "tools.json").is_file()
