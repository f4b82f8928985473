"""The CLI's import budget: `--help` and `diff` start without the heavy parts of the product.

Each command imports its own modules inside its handler (watcher/cli.py); these tests read what a real
`python -X importtime` run of the CLI loaded, so a top-level import that drags in the mcp SDK, matplotlib,
a model provider or the web stack is caught here, not in a stopwatch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from watcher.cli import build_parser
from watcher.contract import commands as contract_commands
from watcher.contract.handshake import CLIENT_PROFILES, DEFAULT_CLIENT_PROFILE, DEFAULT_CLIENT_PROFILES

HEAVY = ("mcp", "mcp_types", "matplotlib", "anthropic", "openai", "starlette")


def _loaded(*argv: str, cwd: Path) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """Top-level packages a CLI run imported, and the run."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "watcher.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name.split(".")[0])
    assert names, f"no -X importtime lines in stderr:\n{done.stderr[-2000:]}"
    return names, done


def test_help_loads_nothing_heavy_and_lists_every_subcommand(tmp_path):
    names, done = _loaded("--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not names & set(HEAVY), f"`mcp-watcher --help` imported {sorted(names & set(HEAVY))}"
    action = next(a for a in build_parser()._actions if a.dest == "command")
    assert isinstance(action.choices, dict)
    missing = [name for name in action.choices if name not in done.stdout]
    assert not missing, f"--help does not list {missing}:\n{done.stdout}"


def test_help_reads_no_config_so_loads_no_validation_library(tmp_path):
    # --help reads no configuration: a foundation module that pulls pydantic or yaml in at import (as the
    # log set-up once did through its settings model) costs every command ~60 ms before it starts.
    names, done = _loaded("--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not names & {"pydantic", "yaml"}, f"`mcp-watcher --help` imported {sorted(names & {'pydantic', 'yaml'})}"


def _write_snapshot(folder: Path, tools: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True)
    (folder / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    for name in ("resources.json", "resource-templates.json", "prompts.json"):
        (folder / name).write_text("[]", encoding="utf-8")
    server = {"era": "modern", "status": "ok", "capabilities": {"tools": {}}}
    (folder / "server.json").write_text(json.dumps(server), encoding="utf-8")
    (folder / "errors.json").write_text("{}", encoding="utf-8")
    return folder


def _tool(name: str, required: list[str]) -> dict[str, object]:
    schema = {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}, "required": required}
    return {"name": name, "description": f"{name} searches.", "inputSchema": schema}


def test_diff_loads_nothing_heavy_and_still_classifies(tmp_path):
    base = _write_snapshot(tmp_path / "a", [_tool(f"t{i}", ["q"]) for i in range(10)])
    # One parameter became required, one tool is new: the input-schema rules run (and find both).
    cand = _write_snapshot(tmp_path / "b", [_tool("t0", ["q", "n"])] + [_tool(f"t{i}", ["q"]) for i in range(1, 11)])
    names, done = _loaded("diff", str(base), str(cand), cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    assert not names & set(HEAVY), f"`mcp-watcher diff` imported {sorted(names & set(HEAVY))}"
    report = json.loads(done.stdout)
    found = {(c["rule"], c["name"]) for c in report["changes"]}
    assert ("parameter_became_required", "t0") in found, found
    assert any(name == "t10" for _, name in found), found


def test_the_parser_names_the_client_profiles_the_handshake_knows():
    # Repeated in contract/commands.py so that building the parser does not import mcp.
    assert tuple(CLIENT_PROFILES) == contract_commands.CLIENT_PROFILE_NAMES
    assert DEFAULT_CLIENT_PROFILE == contract_commands.DEFAULT_CLIENT_PROFILE
    assert DEFAULT_CLIENT_PROFILES == contract_commands.DEFAULT_CLIENT_PROFILES
