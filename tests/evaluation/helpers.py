"""Shared pieces of the evaluation tests: a config with an evaluation block, the test servers as the two sides."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from watcher.config import LoadedConfig, load_config
from watcher.evaluation import run as eval_run
from watcher.evaluation.harness import ServerTarget
from watcher.suites.settings import Server

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "sk-test-5f0c2a9e-never-in-a-server"

TASKS = """\
tasks:
  - id: save-note
    prompt: "Save a note titled groceries with the text milk and eggs."
    expect: {tool: add_note, args: {title: groceries}}
  - id: count
    prompt: "How many notes are stored?"
    expect: {answer_matches: "\\\\d+"}
  - id: find
    prompt: "Search my notes with the query milk."
    expect: {tool: search_notes, args: {query: milk}}
  - id: small-talk
    prompt: "Just say hello, nothing else."
    expect: {no_tool: true}
"""


def write_config(
    folder: Path, api_url: str, provider: str = "anthropic", declared: bool = True, **evaluation: Any
) -> LoadedConfig:
    tasks = folder / "eval-tasks.yaml"
    tasks.write_text(TASKS, encoding="utf-8")
    (folder / "state").mkdir(parents=True, exist_ok=True)  # a configured state's folder must exist
    block = {
        "tasks": str(tasks),
        "provider": provider,
        "model": "fake-model-1",
        "api_key_env": "EVAL_TEST_API_KEY",
        "api_url": api_url if provider == "anthropic" else f"{api_url}/v1",
        "trials": 3,
        "max_steps": 4,
        "max_retries": 2,
        "timeout_seconds": 20,
        **evaluation,
    }
    data = {
        "state": str(folder / "state" / "watcher.db"),
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
        "servers": [
            {
                "name": "notes",
                "team": "books",
                "sdk": "python",
                "language": "python",
                "path": str(ROOT / "tests" / "evaluation"),
                "transport": "stdio",
                "start": ["python", "-m", "tests.evaluation.fixtures.servers", "baseline"],
                "baseline_sdk_version": "2.3.0",
                "requirements": [],
                **({"evaluation": block} if declared else {}),
            }
        ],
        "suites": {"runs_dir": str(folder / "runs"), "envs_dir": str(folder / "envs")},
    }
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_config(path, base_dir=ROOT)


def use_variants(
    monkeypatch: pytest.MonkeyPatch, baseline: str, candidate: str, env_dump: Path | None = None
) -> list[dict[str, ServerTarget]]:
    """Both sides become the test servers (no SDK install); returns the targets each run was given."""
    given: list[dict[str, ServerTarget]] = []

    @contextlib.contextmanager
    def prepared(
        loaded: LoadedConfig, server: Server, versions: Mapping[str, str], log_dir: Path, cancel: threading.Event | None
    ) -> Iterator[dict[str, ServerTarget]]:
        targets = {}
        for side, variant in (("baseline", baseline), ("candidate", candidate)):
            command = [sys.executable, "-m", "tests.evaluation.fixtures.servers", variant]
            if env_dump is not None:
                command += ["--env-dump", str(env_dump / f"{side}.json")]
            targets[side] = eval_run.stdio_target(loaded, server, versions[side], command, str(ROOT), [])
        given.append(targets)
        yield targets

    monkeypatch.setattr(eval_run, "prepare_sides", prepared)
    return given
