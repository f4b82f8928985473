"""The README is the user's entry point: its set-up commands, CLI names and rule table must stay true."""

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


def test_every_rule_is_in_the_readme_table_with_its_verdicts():
    for rule in RULES.values():
        row = next((line for line in README.splitlines() if line.startswith(f"| `{rule.id}` |")), None)
        assert row is not None, f"{rule.id} missing from the README's rule table"
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[3].startswith("yes" if rule.breaks_clients else "no"), rule.id
        assert cells[4].startswith("yes" if rule.affects_models else "no"), rule.id


def test_every_subcommand_is_documented():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for name in commands:
        assert re.search(rf"`mcp-watcher {name}\b", README), f"`mcp-watcher {name}` not in the README"
