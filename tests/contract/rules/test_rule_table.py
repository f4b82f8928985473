"""The rules table as a whole: every registered rule has a case that fires it, in its own family's test
file, and every rule is declared completely."""

from __future__ import annotations

import importlib

import pytest

from tests.contract.rules.helpers import Case
from watcher.contract.rules import FAMILIES, RULES, Rule


def _family_name(family: object) -> str:
    return str(getattr(family, "__name__", "")).rsplit(".", 1)[-1]


FAMILY_NAMES = [_family_name(family) for family in FAMILIES]


def _cases(family_name: str) -> list[Case]:
    module = importlib.import_module(f"tests.contract.rules.test_{family_name}")
    cases: list[Case] = module.CASES
    return cases


def test_every_rule_has_a_case() -> None:
    assert {case[1] for name in FAMILY_NAMES for case in _cases(name)} == set(RULES)


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_NAMES)
def test_each_family_file_tests_exactly_its_own_rules(family: object) -> None:
    name = _family_name(family)
    declared = {rule.id for rule in family.RULES}
    assert {case[1] for case in _cases(name)} == declared
    assert {RULES[rule_id].family for rule_id in declared} <= {name}


def test_rules_have_ids_docs_and_families() -> None:
    for rule_id, rule in RULES.items():
        assert rule.id == rule_id and rule_id.islower() and " " not in rule_id
        assert rule.doc and "\n" not in rule.doc and rule.family


def test_a_rule_is_declared_with_keywords_and_a_consistent_grade() -> None:
    with pytest.raises(TypeError):
        Rule("r", "f", "doc", True, False)  # type: ignore[misc]
    with pytest.raises(ValueError, match="gray means it breaks no client"):
        Rule(id="r", family="f", doc="A doc.", breaks_clients=True, affects_models=False, gray=True)
    with pytest.raises(ValueError, match="one non-empty line"):
        Rule(id="r", family="f", doc="two\nlines", breaks_clients=False, affects_models=False)
