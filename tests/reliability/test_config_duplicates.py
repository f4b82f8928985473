"""Class 10: a key given twice in the YAML is refused with the file and line, not silently replaced."""

from __future__ import annotations

import pytest

from watcher.cli import main
from watcher.config import parse_config
from watcher.core.errors import ConfigError

TWICE = """\
teams:
  - name: books
    slack_channel: "#books-mcp"
schedule:
  poll_minutes: 30
teams:
  - name: infra
    slack_channel: "#infra-mcp"
"""


def test_duplicate_top_level_key_names_file_and_both_lines():
    with pytest.raises(ConfigError) as caught:
        parse_config(TWICE, "watcher.yaml")
    assert str(caught.value) == (
        "watcher.yaml:6: duplicate key 'teams' (first given on line 1); each key may appear once"
    )


def test_duplicate_nested_key_is_refused_too():
    text = "schedule:\n  poll_minutes: 30\n  poll_minutes: 5\n"
    with pytest.raises(ConfigError, match=r"^w.yaml:3: duplicate key 'poll_minutes' \(first given on line 2\)"):
        parse_config(text, "w.yaml")


def test_merge_keys_may_still_be_overridden():
    assert parse_config("schedule:\n  <<: {poll_minutes: 30}\n  poll_minutes: 5\n").schedule.poll_minutes == 5


def test_cli_exits_2_on_a_duplicate_key(tmp_path, capsys):
    path = tmp_path / "watcher.yaml"
    path.write_text(TWICE)
    assert main(["--config", str(path), "status"]) == 2
    assert f"{path}:6: duplicate key 'teams'" in capsys.readouterr().err
