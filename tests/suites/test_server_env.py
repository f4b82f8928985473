"""servers[].env_from / env_files: config checks, run-time reading, and the scrubbing around them (no installs)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tests.suites.helpers import fixture_server, write_config
from watcher.boundary.launch import Host, HostReason
from watcher.boundary.process import ServerProcess, free_port, scrubbed_env
from watcher.config import LoadedConfig, load_config, parse_config
from watcher.core.errors import ConfigError
from watcher.suites.run.server_env import ServerEnvError, granted_env
from watcher.suites.runner import run_check

BASE = """\
sdks:
  - {name: python, registry: pypi, package: mcp}
teams:
  - {name: books, slack_channel: '#books'}
servers:
  - name: library
    team: books
    sdk: python
    language: python
    path: examples/library
    start: [python, -m, library_server]
    baseline_sdk_version: "2.3.0"
"""


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            "    env_from:\n      - LIBRARY_TOKEN\n      - SLACK_BOT_TOKEN\n",
            "c.yaml:15: servers.0.env_from.1: SLACK_BOT_TOKEN is one of",
        ),
        (
            "    env_files: {GITHUB_TOKEN: /run/secrets/gh}\n",
            "c.yaml:13: servers.0.env_files.GITHUB_TOKEN: GITHUB_TOKEN is",
        ),
        ("    env_from: [1TOKEN]\n", "c.yaml:13: servers.0.env_from: Value error, '1TOKEN' is not a variable name"),
        ("    env_from: [A_TOKEN, A_TOKEN]\n", "servers.0.env_from: Value error, a variable is named twice"),
        ("    env_form: [A_TOKEN]\n", "c.yaml:13: servers.0.env_form: unknown key"),
        ("    env: {A_TOKEN: x}\n    env_from: [A_TOKEN]\n", "servers.0.env_from.0: A_TOKEN is also set in env"),
        ("    env_from: [A_TOKEN]\n    env_files: {A_TOKEN: a}\n", "servers.0.env_files.A_TOKEN: A_TOKEN is also"),
    ],
)
def test_config_refuses_the_watchers_secrets_and_names_the_key(extra: str, expected: str):
    with pytest.raises(ConfigError) as info:
        parse_config(BASE + extra, "c.yaml")
    assert expected in str(info.value)


def test_the_configured_slack_variable_and_secret_file_are_refused_too():
    slack = "slack:\n  token_env: TEAM_SLACK_TOKEN\n  webhook_file: /run/secrets/hook\n"
    with pytest.raises(ConfigError, match=r"servers\.0\.env_from\.0: TEAM_SLACK_TOKEN is one of the watcher's"):
        parse_config(slack + BASE + "    env_from: [TEAM_SLACK_TOKEN]\n", "c.yaml")
    with pytest.raises(ConfigError, match=r"servers\.0\.env_files\.HOOK: this is the watcher's Slack secret file"):
        parse_config(slack + BASE + "    env_files: {HOOK: /run/secrets/hook}\n", "c.yaml")


def _loaded(tmp_path: Path, extra: str) -> LoadedConfig:
    path = tmp_path / "watcher.yaml"
    path.write_text(BASE + extra, encoding="utf-8")
    return load_config(path, base_dir=tmp_path)


def test_granted_env_reads_the_environment_and_files_at_run_time(tmp_path: Path):
    (tmp_path / "db-url").write_text("  postgres://u:pw@db/x \n", encoding="utf-8")
    loaded = _loaded(tmp_path, "    env_from: [LIBRARY_TOKEN]\n    env_files: {DB_URL: db-url}\n")
    server = loaded.config.server("library")
    granted = granted_env(loaded, server, {"LIBRARY_TOKEN": "tok-1", "OTHER": "x"})
    assert granted == {"LIBRARY_TOKEN": "tok-1", "DB_URL": "postgres://u:pw@db/x"}


def test_granted_env_errors_name_the_key_and_variable_never_the_value(tmp_path: Path):
    loaded = _loaded(tmp_path, "    env_from: [LIBRARY_TOKEN]\n    env_files: {DB_URL: missing/db-url}\n")
    server = loaded.config.server("library")
    with pytest.raises(ServerEnvError) as unset:
        granted_env(loaded, server, {})
    assert "servers.0.env_from.0: LIBRARY_TOKEN is not set in the watcher's environment" in str(unset.value)
    with pytest.raises(ServerEnvError) as missing:
        granted_env(loaded, server, {"LIBRARY_TOKEN": "tok-1"})
    assert "servers.0.env_files.DB_URL: cannot read" in str(missing.value) and "missing/db-url" in str(missing.value)
    # A variable (or file) that merely copies the watcher's Slack token is refused by value.
    copied = "xoxb-copied-" + "9" * 12
    (tmp_path / "missing").mkdir()
    (tmp_path / "missing" / "db-url").write_text("fine")
    with pytest.raises(ServerEnvError) as copy:
        granted_env(loaded, server, {"LIBRARY_TOKEN": copied, "SLACK_BOT_TOKEN": copied})
    assert "servers.0.env_from: LIBRARY_TOKEN holds the value of one of the watcher's own secrets" in str(copy.value)
    for info in (unset, missing, copy):
        assert copied not in str(info.value) and "fine" not in str(info.value)


def test_granted_variables_pass_the_scrubber_only_under_their_own_names():
    parent = {"PATH": "/usr/bin", "SLACK_BOT_TOKEN": "xoxb-1", "LIBRARY_TOKEN": "tok-1"}
    child = scrubbed_env(
        secret_names={"SLACK_BOT_TOKEN"},
        source=parent,
        extra={"SERVICE_API_KEY": "k"},
        granted={"LIBRARY_TOKEN": "tok-1", "SLACK_BOT_TOKEN": "xoxb-1"},
    )
    assert child.env["LIBRARY_TOKEN"] == "tok-1"  # looks secret, passes: it was named for this server
    assert "SLACK_BOT_TOKEN" not in child.env and "SERVICE_API_KEY" not in child.env
    assert child.dropped == ["SERVICE_API_KEY", "SLACK_BOT_TOKEN"]
    assert child.granted == frozenset({"LIBRARY_TOKEN"})
    assert "tok-1" not in repr(child)


def test_a_server_that_prints_its_granted_token_has_it_masked_in_the_evidence(tmp_path: Path):
    value = "tok-printed-by-a-careless-server"
    script = textwrap.dedent(
        """
        import os, sys
        print("starting with token " + os.environ["LIBRARY_TOKEN"], file=sys.stderr)
        sys.exit(3)
        """
    )
    child = scrubbed_env(source={"PATH": "/usr/bin"}, granted={"LIBRARY_TOKEN": value})
    process = ServerProcess(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=child,
        log_dir=tmp_path,
        transport="http",
        port=free_port(),
        launcher=Host(HostReason.OPTED_OUT),
    )
    with process:
        result = process.start(timeout=20)
    assert not result.ok and "exited with code 3" in (result.error or "")
    assert "starting with token [secret]" in result.evidence
    assert value not in result.evidence


def test_an_unset_env_from_variable_is_a_run_error_before_anything_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("ENVDUMP_API_TOKEN", raising=False)
    server = fixture_server(
        "envdump", "envdump_server", ["python", "-m", "envdump_server"], env_from=["ENVDUMP_API_TOKEN"]
    )
    loaded = write_config(tmp_path, [server], tmp_path / "envs")
    report = run_check(loaded, "envdump", "2.3.0")
    assert report["verdict"] == "error"
    [reason] = report["reasons"]
    assert "servers.0.env_from.0: ENVDUMP_API_TOKEN is not set in the watcher's environment" in reason["reason"]
    assert report["install"] is None and report["start"] is None
    assert not (tmp_path / "envs").exists()
