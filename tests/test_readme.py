"""The README is the user's entry point: its set-up commands, CLI names and rules link must stay true."""

from __future__ import annotations

import re
from pathlib import Path

from watcher.cli import build_parser
from watcher.contract.rules import RULES

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_two_setup_commands_exist_and_ci_runs_the_test_one():
    assert "scripts/run " in README and "scripts/test " in README
    assert (ROOT / "scripts" / "run").stat().st_mode & 0o111
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_the_rules_are_linked_not_copied():
    # The rules table lives in docs/contract-rules.md (tests/contract/test_contract_rules_doc.py keeps it true).
    assert "docs/contract-rules.md" in README and (ROOT / "docs" / "contract-rules.md").is_file()
    assert not any(line.startswith(f"| `{rule_id}` |") for rule_id in RULES for line in README.splitlines())


def test_every_subcommand_is_documented():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for name in commands:
        assert re.search(rf"`mcp-watcher {name}\b", README), f"`mcp-watcher {name}` not in the README"
