"""The renderers: JSON, Markdown (parsed back with markdown-it-py), JUnit (parsed with ElementTree), GitHub."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from markdown_it import MarkdownIt

from tests.contract.helpers import obj
from tests.contract.rules.helpers import STR, schema_diff
from watcher.contract.report import change_json, fails, render, worst_level
from watcher.contract.rules import RULES
from watcher.contract.rules.base import make_change


def _change(rule_id: str, name: str, path: str | None, before: Any = None, after: Any = None, **extra: Any) -> dict:
    return {**change_json(make_change(RULES[rule_id], "tools", name, path, before, after)), **extra}


REPORT = {
    "baseline": "1.4.0",
    "candidate": "1.5.0",
    "changes": [
        _change("tool_removed", "search_issues", None, hint="likely renamed to 'find_issues'"),
        _change(
            "required_parameter_added",
            "create_issue",
            "inputSchema.required",
            ["project", "title"],
            ["project", "title", "priority"],
            era="both",
        ),
        _change("description_changed", "update_issue", "description", "Update | edit an `issue`", "Edit an issue\n"),
        _change("output_property_added", "get_issue", "outputSchema.properties.labels", None, {"type": "array"}),
    ],
    "notes": ["modern era: not in the candidate snapshot; not compared"],
}


def test_levels() -> None:
    assert worst_level(REPORT) == "clients"
    assert worst_level({"changes": REPORT["changes"][2:]}) == "models"
    assert worst_level({"changes": REPORT["changes"][3:]}) == "none"
    assert fails(REPORT, "clients") and fails({"changes": REPORT["changes"][2:]}, "models")
    assert not fails({"changes": REPORT["changes"][2:]}, "clients") and not fails(REPORT, "none")


def test_json_round_trips() -> None:
    assert json.loads(render(REPORT, "json")) == REPORT


def _table_rows(markdown: str) -> dict[str, list[list[str]]]:
    """Section heading → rows of cell texts, read back with a real Markdown parser."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    sections: dict[str, list[list[str]]] = {}
    heading = None
    row: list[str] | None = None
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h3":
            heading = tokens[index + 1].content
        elif token.type == "tr_open":
            row = []
        elif token.type == "inline" and row is not None:
            row.append("".join(child.content for child in token.children or []))
        elif token.type == "tr_close" and row is not None:
            assert heading is not None
            sections.setdefault(heading, []).append(row)
            row = None
    return sections


def test_markdown_groups_changes_in_tables() -> None:
    sections = _table_rows(render(REPORT, "markdown"))
    assert set(sections) == {"Breaks clients (2)", "Affects models (1)", "Other changes (1)"}
    header, *rows = sections["Breaks clients (2)"]
    assert header == ["Era", "List", "Name", "Path", "Change", "Before", "After"]
    assert [r[2] for r in rows] == ["search_issues", "create_issue"]
    assert rows[1][4] == "required_parameter_added"
    ((_, described),) = [sections["Affects models (1)"]]
    # A pipe and backticks inside a value stay inside their cell.
    assert described[5] == "Update | edit an `issue`" and described[6] == "Edit an issue"


def test_junit_has_one_testcase_per_change_and_fails_at_the_level() -> None:
    root = ET.fromstring(render(REPORT, "junit"))
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert len(cases) == 4 and suite.get("failures") == "2" and root.get("failures") == "2"
    failures = [c.find("failure") for c in cases if c.find("failure") is not None]
    assert [f.get("type") for f in failures] == ["tool_removed", "required_parameter_added"]
    models = ET.fromstring(render(REPORT, "junit", fail_on="models")).find("testsuite")
    assert models is not None and models.get("failures") == "3"


def test_junit_without_changes_still_has_a_passing_case() -> None:
    suite = ET.fromstring(render({"baseline": "a", "candidate": "b", "changes": []}, "junit")).find("testsuite")
    assert suite is not None and [c.get("name") for c in suite.findall("testcase")] == ["no contract changes"]


def test_github_annotations_are_escaped_one_per_line() -> None:
    lines = render(REPORT, "github").splitlines()
    assert len(lines) == 5
    assert lines[0].startswith("::error title=MCP contract%3A tool_removed (tools/search_issues)::")
    assert lines[2].startswith("::warning ") and lines[3].startswith("::notice ")
    assert "%0A" in lines[2] and "\n" not in lines[2]
    assert lines[-1].startswith("::notice title=MCP contract diff::4 change(s): 2 break clients")


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="format must be one of"):
        render(REPORT, "html")


def test_dangerous_changes_fail_only_from_the_dangerous_level_and_have_their_own_table() -> None:
    changes = schema_diff(obj({"q": STR, "lang": STR}), obj({"q": STR}))
    report = {"baseline": "a", "candidate": "b", "changes": changes}
    assert [c["grade"] for c in changes] == ["dangerous"]
    assert not fails(report, "clients")
    assert fails(report, "dangerous") and fails(report, "models")
    assert "### Dangerous: still valid, no longer the same meaning (1)" in render(report, "markdown")


def test_the_markdown_header_counts_what_each_section_lists() -> None:
    """Issue 37: the header counted 3 "affect models" where the section listed 2 (a breaking change that also
    affects models is listed under breaking). Each change is in exactly one section, and the header says so."""
    dangerous = schema_diff(obj({"q": STR, "lang": STR}), obj({"q": STR}))
    report = {**REPORT, "changes": [*REPORT["changes"], *dangerous]}
    assert any(c["breaksClients"] and c["affectsModels"] for c in report["changes"])
    markdown = render(report, "markdown")
    sections = {re.sub(r" \(\d+\)$", "", title): len(rows) - 1 for title, rows in _table_rows(markdown).items()}
    header = re.search(r"\*\*(\d+) change\(s\): (.*?)\.\*\*", markdown)
    assert header is not None
    said = {name: int(n) for n, name in re.findall(r"(\d+) ([a-z ]+?)(?:,|$)", header.group(2))}
    assert said == {"break clients": 2, "dangerous": 1, "affect models": 1, "other": 1}
    titles = {"break clients": "Breaks clients", "affect models": "Affects models", "other": "Other changes",
              "dangerous": "Dangerous: still valid, no longer the same meaning"}  # fmt: skip
    assert {titles[name]: n for name, n in said.items()} == sections
    assert sum(said.values()) == int(header.group(1)) == len(report["changes"])
