"""docs/cli.md against the real parser: every subcommand and option documented, nothing that does not exist."""

from __future__ import annotations

import argparse
import re

from tests.docs.helpers import DOCS, code_spans, headings, section, tables
from watcher.cli import build_parser

CLI_DOC = DOCS / "cli.md"
TEXT = CLI_DOC.read_text(encoding="utf-8")


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    assert isinstance(action.choices, dict)
    return dict(action.choices)


def _arguments(parser: argparse.ArgumentParser) -> set[str]:
    """How the doc names each argument: the long option (`--json`), or the positional's metavar (`BASELINE`)."""
    names = set()
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if action.option_strings:
            names.add(max(action.option_strings, key=len))
        else:
            names.add(str(action.metavar or action.dest.upper()))
    return names


def _documented(heading: str) -> set[str]:
    """The first code span of each row of the option tables under ``heading``."""
    found = set()
    for table in tables(CLI_DOC):
        if table.heading == heading and table.header[:1] == ["option"]:
            for row in table.rows:
                spans = code_spans(row[0])
                assert spans, f"docs/cli.md § {heading}: option row {row[0]!r} names no `option`"
                found.add(spans[0].rstrip("…").strip())
    return found


def test_every_subcommand_is_documented():
    for name in _subcommands():
        assert re.search(rf"`mcp-watcher {name}\b", TEXT), f"`mcp-watcher {name}` not in docs/cli.md"


def test_every_subcommand_has_its_own_section_with_exit_codes():
    for name in _subcommands():
        heading = f"`mcp-watcher {name}`"
        assert heading in headings(CLI_DOC), f"docs/cli.md has no '## {heading}' section"
        assert "Exit code" in section(CLI_DOC, heading), f"docs/cli.md § {heading} does not give its exit codes"


def test_every_option_of_every_subcommand_is_documented_and_nothing_else():
    problems = []
    for name, parser in _subcommands().items():
        heading = f"`mcp-watcher {name}`"
        real, documented = _arguments(parser), _documented(heading)
        problems += [f"docs/cli.md § {heading}: `{arg}` is not documented" for arg in sorted(real - documented)]
        problems += [
            f"docs/cli.md § {heading}: `{arg}` is documented but not an option" for arg in sorted(documented - real)
        ]
    assert not problems, "\n".join(problems)


def test_the_global_options_are_documented_and_nothing_else():
    real = _arguments(build_parser()) - {"COMMAND"}
    documented = _documented("Global options")
    assert real == documented, f"docs/cli.md § Global options: missing {real - documented}, unknown {documented - real}"


def test_the_synopsis_names_only_real_options():
    for name, parser in _subcommands().items():
        body = section(CLI_DOC, f"`mcp-watcher {name}`")
        synopsis = body.split("```")[1] if body.count("```") >= 2 else ""
        assert f"mcp-watcher {name}" in synopsis, f"docs/cli.md § mcp-watcher {name}: no synopsis block"
        for option in set(re.findall(r"(?<![\w-])--[a-z][\w-]*", synopsis)):
            assert option in _arguments(parser), f"docs/cli.md § mcp-watcher {name}: synopsis names unknown {option}"
