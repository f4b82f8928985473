"""Moved verbatim from tests/test_readme.py: the rules table must carry every rule with its verdicts.

The README no longer holds the table; it reads the one generated copy (watcher/contract/RULES.md today).
"""

from __future__ import annotations

from pathlib import Path

from watcher.contract.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "watcher" / "contract" / "RULES.md").read_text(encoding="utf-8")


def test_every_rule_is_in_the_readme_table_with_its_verdicts():
    for rule in RULES.values():
        row = next((line for line in README.splitlines() if line.startswith(f"| `{rule.id}` |")), None)
        assert row is not None, f"{rule.id} missing from the README's rule table"
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[3].startswith("yes" if rule.breaks_clients else "no"), rule.id
        assert cells[4].startswith("yes" if rule.affects_models else "no"), rule.id
