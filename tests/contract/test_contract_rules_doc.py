"""The rules document, docs/contract-rules.md: the one generated copy of the rules table."""

from __future__ import annotations

from pathlib import Path

from watcher.contract.rules import RULES
from watcher.contract.rules.document import DOCUMENT_PATH, rules_document

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = (ROOT / DOCUMENT_PATH).read_text(encoding="utf-8")


def test_markdown_table_lists_every_rule_and_is_committed() -> None:
    table = rules_document()
    for rule_id in RULES:
        assert f"| `{rule_id}` |" in table
    assert table == DOCUMENT, "regenerate: python -m watcher.contract.rules --markdown > docs/contract-rules.md"


def test_every_rule_is_in_the_document_table_with_its_verdicts() -> None:
    for rule in RULES.values():
        row = next((line for line in DOCUMENT.splitlines() if line.startswith(f"| `{rule.id}` |")), None)
        assert row is not None, f"{rule.id} missing from the rules document's table"
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[3].startswith("yes" if rule.breaks_clients else "no"), rule.id
        assert cells[4].startswith("yes" if rule.affects_models else "no"), rule.id


def test_the_document_tells_how_to_add_a_rule() -> None:
    section = DOCUMENT.split("## Adding a rule", 1)[1]
    for step in ("Rule(", "check(compared)", "tests/contract/rules/test_<family>.py", "--markdown"):
        assert step in section
