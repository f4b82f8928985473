from __future__ import annotations

import json
from pathlib import Path

import pytest

from watcher.config import load_config, parse_config, secret_env_names
from watcher.core.errors import ConfigError
from watcher.notify.settings import slack_credentials

ROOT = Path(__file__).resolve().parent.parent


def test_shipped_default_config_is_valid_and_watches_every_official_sdk():
    config = load_config(ROOT / "config" / "watcher.yaml").config
    registries = {s.registry for s in config.sdks}
    assert registries == {"pypi", "npm", "nuget", "goproxy", "crates", "maven", "rubygems", "packagist", "github"}
    packages = {s.package for s in config.sdks}
    assert {
        "mcp",
        "@modelcontextprotocol/sdk",
        "ModelContextProtocol",
        "rmcp",
        "io.modelcontextprotocol.sdk:mcp",
    } <= packages
    assert config.state == "../state/watcher.db"


def test_paths_in_a_config_file_resolve_against_its_folder_wherever_the_command_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """One rule (docs/configuration.md): the shipped config's `../state` is the checkout's state/ from any folder."""
    monkeypatch.chdir(tmp_path)
    loaded = load_config(ROOT / "config" / "watcher.yaml")
    assert loaded.resolve(loaded.config.state) == ROOT / "state" / "watcher.db"
    for folder in ("runs_dir", "envs_dir", "git_cache_dir"):  # beside the state, not under config/
        assert loaded.resolve(getattr(loaded.config.suites, folder)).parent == ROOT / "state"
    library = loaded.config.server("library")
    assert library.path and loaded.resolve(library.path).resolve() == ROOT / "examples" / "library"
    assert (loaded.resolve(library.path) / "pyproject.toml").is_file()
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "w.yaml").write_text("state: db/w.db\n")
    relative = load_config("conf/w.yaml")  # typed on the command line: against the caller's folder
    assert relative.resolve(relative.config.state) == tmp_path / "conf" / "db" / "w.db"
    text = (ROOT / "config" / "watcher.yaml").read_text()
    assert "resolve against this file's folder" in text and "DESIGN.md" not in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sdks:\n  - name: python\n    registry: pypy\n    package: mcp\n", "c.yaml:3: sdks.0.registry:"),
        (
            "sdks:\n  - name: python\n    registry: pypi\n    package: mcp\n    colour: red\n",
            "c.yaml:5: sdks.0.colour: unknown key",
        ),
        ("teams:\n  - name: books\n", "c.yaml:2: teams.0.slack_channel: required key is missing"),
        ("schedule:\n  poll_minutes: -1\n", "c.yaml:2: schedule.poll_minutes:"),
        (
            "sdks:\n  - {name: python, registry: pypi, package: mcp}\nteams:\n  - name: books\n"
            "    slack_channel: '#b'\n    sdks: [python, go]\n",
            "c.yaml:6: teams.0.sdks.1: unknown SDK 'go'",
        ),
        (
            "sdks:\n  - {name: python, registry: pypi, package: mcp}\n  - {name: python, registry: npm, package: x}\n",
            "sdks.1.name: duplicate name 'python'",
        ),
        ("slack:\n  token: xoxb-123\n", "c.yaml:2: slack.token: secrets are never read from the YAML"),
        ("state: [unclosed\n", "c.yaml:2: not valid YAML"),
        ("- just\n- a list\n", "c.yaml:1: expected a mapping"),
    ],
)
def test_config_errors_name_file_line_and_key(text: str, expected: str):
    with pytest.raises(ConfigError) as info:
        parse_config(text, "c.yaml")
    assert expected in str(info.value)
    assert "xoxb-123" not in str(info.value)


def test_missing_config_file_is_named(tmp_path: Path):
    with pytest.raises(ConfigError, match=r"nowhere\.yaml: cannot read the config file"):
        load_config(tmp_path / "nowhere.yaml")


def test_config_path_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "from-env.yaml"
    path.write_text("state: elsewhere.db\n")
    monkeypatch.setenv("MCP_WATCHER_CONFIG", str(path))
    loaded = load_config(None, base_dir=tmp_path)
    assert loaded.config.state == "elsewhere.db"
    assert loaded.resolve(loaded.config.state) == tmp_path / "elsewhere.db"


def test_slack_secrets_come_from_environment_or_file_and_never_print(tmp_path: Path):
    config = parse_config("slack:\n  token_env: MY_TOKEN\n  webhook_file: %s\n" % (tmp_path / "hook"))
    (tmp_path / "hook").write_text("http://127.0.0.1:9/hook\n")
    creds = slack_credentials(config.slack, {"MY_TOKEN": "xoxb-secret"})
    assert creds.token == "xoxb-secret"
    assert creds.webhook_url == "http://127.0.0.1:9/hook"
    assert "xoxb-secret" not in repr(creds)
    assert "MY_TOKEN" in secret_env_names(config)
    assert not slack_credentials(parse_config("{}").slack, {}).any


def test_json_log_lines_carry_ids_and_mask_secrets(monkeypatch: pytest.MonkeyPatch):
    import json
    import logging

    from watcher.core.logs import JsonFormatter, RedactingFilter

    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-live-secret")
    record = logging.LogRecord(
        "watcher.polling.poll", logging.WARNING, __file__, 1, "poll of %s failed: %s", None, None
    )
    record.args = ("python", "token xoxb-live-secret rejected")
    record.source = "python"
    RedactingFilter().filter(record)
    line = json.loads(JsonFormatter().format(record))
    assert line["source"] == "python" and line["level"] == "WARNING"
    assert "xoxb-live-secret" not in line["message"] and "[secret]" in line["message"]


def test_an_unknown_client_profile_is_named_with_its_line_and_key():
    text = (
        "servers:\n  - name: lib\n    team: books\n    language: python\n    path: .\n    start: [python, -m, x]\n"
        "    baseline_sdk_version: '1.0'\n    client_profiles: [typical, bogus]\n"
    )
    with pytest.raises(ConfigError) as info:
        parse_config(text, "c.yaml")
    assert "c.yaml:8: servers.0.client_profiles: Value error, client profile 'bogus'" in str(info.value)


def test_the_shipped_config_carries_the_examples_evaluation_which_says_skipped_without_a_key(tmp_path: Path):
    from watcher.evaluation.run import run_evaluation, tasks_file

    loaded = load_config(ROOT / "config" / "watcher.yaml")
    library = loaded.config.server("library")
    assert library.evaluation is not None
    assert tasks_file(loaded, library, library.evaluation, None) == ROOT / "examples" / "library" / "eval-tasks.yaml"
    report = run_evaluation(loaded, "library", "2.4.0b1", environ={}, run_dir=tmp_path / "eval")
    assert report["verdict"] == "skipped"
    assert report["error"].startswith("skipped: ANTHROPIC_API_KEY not set")
    assert "no evaluation set declared" not in json.dumps(report)


def test_an_unknown_key_points_to_the_configuration_reference_that_exists(tmp_path: Path):
    path = tmp_path / "c.yaml"
    path.write_text("stat: x.db\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert "every key is in docs/configuration.md" in str(err.value)
    assert "README's configuration reference" not in str(err.value)
    assert (ROOT / "docs" / "configuration.md").is_file()
