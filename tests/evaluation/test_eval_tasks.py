"""The task file: valid shapes, and errors that name the file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.evaluation.helpers import ROOT, TASKS
from watcher.config import parse_config
from watcher.core.errors import ConfigError
from watcher.evaluation.tasks import load_tasks, parse_tasks


def test_the_three_checkers_parse():
    tasks = parse_tasks(TASKS, "tasks.yaml")
    assert [t.id for t in tasks] == ["save-note", "count", "find", "small-talk"]
    assert tasks[0].expect.tool == "add_note" and tasks[0].expect.args == {"title": "groceries"}
    assert tasks[1].expect.answer_matches == "\\d+"
    assert tasks[3].expect.no_tool is True
    assert tasks[0].expect.describe() == "calls add_note with {'title': 'groceries'}"


def test_the_example_servers_task_file_is_valid():
    tasks = load_tasks(ROOT / "examples" / "library" / "eval-tasks.yaml")
    assert any(t.expect.no_tool for t in tasks) and any(t.expect.tool for t in tasks)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tasks:\n  - id: a\n    prompt: hi\n    expect: {no_tool: true, tool: x}\n", "f.yaml:4: tasks.0.expect: "),
        ("tasks:\n  - id: a\n    prompt: hi\n    expect: {}\n", "expected exactly one of tool, no_tool"),
        ("tasks:\n  - id: a\n    promt: hi\n    expect: {no_tool: true}\n", "f.yaml:3: tasks.0.promt: unknown key"),
        ("tasks:\n  - id: a\n    expect: {no_tool: true}\n", "f.yaml:2: tasks.0.prompt: required key is missing"),
        (
            "tasks:\n  - id: a\n    prompt: x\n    expect:\n      answer_matches: '('\n",
            "f.yaml:5: tasks.0.expect.answer_matches: Value error, not a valid regular expression",
        ),
        (
            "tasks:\n  - id: a\n    prompt: x\n    expect: {no_tool: true}\n  - id: a\n    prompt: y\n"
            "    expect: {no_tool: true}\n",
            "f.yaml:5: tasks.1.id: duplicate task id 'a'",
        ),
        ("tasks:\n  - id: a\n    prompt: x\n    expect: {args: {t: 1}, no_tool: true}\n", "args constrain a tool call"),
        ("tasks: [\n", "f.yaml:2: not valid YAML"),
        ("- a\n", "f.yaml:1: expected a mapping with a `tasks:` list"),
        ("tasks: []\n", "f.yaml:1: tasks: List should have at least 1 item"),
    ],
)
def test_errors_name_file_line_and_key(text: str, expected: str):
    with pytest.raises(ConfigError) as caught:
        parse_tasks(text, "f.yaml")
    assert expected in str(caught.value)


def test_a_missing_task_file_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="cannot read the task file"):
        load_tasks(tmp_path / "nope.yaml")


SERVER = """\
sdks: [{name: python, registry: pypi, package: mcp}]
teams: [{name: books, slack_channel: "#b"}]
servers:
  - name: library
    team: books
    sdk: python
    language: python
    path: examples/library
    start: [python, -m, library_server]
    baseline_sdk_version: 2.3.0
    evaluation:
      tasks: eval-tasks.yaml
      model: claude-sonnet-4-5
"""


def test_the_config_evaluation_block_defaults_and_errors():
    evaluation = parse_config(SERVER, "w.yaml").servers[0].evaluation
    assert evaluation is not None
    assert (evaluation.provider, evaluation.trials, evaluation.max_steps, evaluation.key_env()) == (
        "anthropic",
        5,
        6,
        "ANTHROPIC_API_KEY",
    )
    assert evaluation.budget.max_trials is None and evaluation.thresholds.tool_calls_ratio == 1.5
    with pytest.raises(ConfigError, match=r"w.yaml:14: servers.0.evaluation.trials: Input should be greater"):
        parse_config(SERVER + "      trials: 0\n", "w.yaml")
    with pytest.raises(ConfigError, match=r"w.yaml:14: servers.0.evaluation.provider: Input should be"):
        parse_config(SERVER + "      provider: gemini\n", "w.yaml")
    with pytest.raises(ConfigError, match=r"w.yaml:14: servers.0.evaluation.api_key: secrets are never read"):
        parse_config(SERVER + "      api_key: sk-123\n", "w.yaml")


def test_the_providers_key_variable_is_one_of_the_secrets_a_server_never_sees():
    from watcher.config import secret_env_names

    config = parse_config(SERVER + "      api_key_env: TEAM_LLM_CREDENTIAL\n", "w.yaml")
    assert "TEAM_LLM_CREDENTIAL" in secret_env_names(config)
