"""The diff report: its record (`DiffReport`), its JSON form and its renderings (json, markdown, junit,
github workflow annotations).

The JSON form is the public shape — what `mcp-watcher diff --format json` prints and the suites store:
{"baseline", "candidate", "changes": [{"list", "name", "path", "kind", "before", "after",
"breaksClients", "affectsModels", "rule", "hint"?, "era"?}], "summary", "eras", "notes"}.
The renderers read that JSON form, so a stored report renders the same as a fresh one.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from watcher.contract.rules.base import Change
    from watcher.core.contract_doc import ContractChange, ContractDiff

FORMATS = ("json", "markdown", "junit", "github")
LEVELS = ("clients", "dangerous", "models", "lints", "none")
_CELL_LIMIT = 120


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffReport:
    """The outcome of comparing two snapshots."""

    baseline: str
    """How the baseline is named in the report (its path, or a label such as an SDK version)."""
    candidate: str
    changes: tuple[Change, ...]
    """In report order: by list, entry name, era, path and kind."""
    lints: tuple[Change, ...] = ()
    """Evolution lints (grade "lint"), apart from `changes`: they fail a run only with --fail-on lints."""
    eras: tuple[str, ...]
    """The era pairs compared ("legacy", "modern", or e.g. "legacy vs modern")."""
    notes: tuple[str, ...]
    """What could not be compared, and why."""


def change_json(change: Change) -> ContractChange:
    """One change in the report's JSON shape (`hint` and `era` only when set)."""
    record: ContractChange = {
        "list": change.list_name,
        "name": change.name,
        "path": change.path,
        "kind": change.kind,
        "before": change.before,
        "after": change.after,
        "breaksClients": change.breaks_clients,
        "affectsModels": change.affects_models,
        "rule": change.rule.id,
        "grade": change.grade,
    }
    if change.hint:
        record["hint"] = change.hint
    if change.era:
        record["era"] = change.era
    if change.profile:
        record["profile"] = change.profile
    return record


def report_json(report: DiffReport) -> ContractDiff:
    """The report's JSON form (see the module docstring)."""
    return {
        "baseline": report.baseline,
        "candidate": report.candidate,
        "changes": [change_json(change) for change in report.changes],
        "lints": [change_json(change) for change in report.lints],
        "summary": {
            "total": len(report.changes),
            "breaksClients": sum(1 for c in report.changes if c.breaks_clients),
            "affectsModels": sum(1 for c in report.changes if c.affects_models),
            "dangerous": sum(1 for c in report.changes if c.grade == "dangerous"),
            "lints": len(report.lints),
        },
        "eras": list(report.eras),
        "notes": list(report.notes),
    }


def worst_level(report: ContractDiff) -> str:
    """The report's worst grade: "clients" if any change breaks clients, else "models" if any affects
    models, else "none"."""
    changes = report.get("changes") or []
    if any(c.get("breaksClients") for c in changes):
        return "clients"
    if any(c.get("affectsModels") for c in changes):
        return "models"
    return "none"


def at_level(change: ContractChange, fail_on: str) -> bool:
    """Whether one change is at or above the --fail-on level."""
    if fail_on == "clients":
        return bool(change.get("breaksClients"))
    if fail_on == "dangerous":
        return bool(change.get("breaksClients")) or change.get("grade") == "dangerous"
    if fail_on == "models":
        return bool(change.get("breaksClients") or change.get("affectsModels"))
    if fail_on == "lints":
        return bool(change.get("breaksClients") or change.get("affectsModels") or change.get("grade") == "lint")
    return False


def fails(report: ContractDiff, fail_on: str = "clients") -> bool:
    if fail_on not in LEVELS:
        raise ValueError(f"fail_on must be one of {', '.join(LEVELS)}, not {fail_on!r}")
    return any(at_level(c, fail_on) for c in [*(report.get("changes") or []), *(report.get("lints") or [])])


def render(report: ContractDiff, fmt: str, fail_on: str = "clients") -> str:
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return _markdown(report)
    if fmt == "junit":
        return _junit(report, fail_on)
    if fmt == "github":
        return _github(report, fail_on)
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")


# -- shared ----------------------------------------------------------------------------------------


def _value(value: object) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = " ".join(text.split())
    return text if len(text) <= _CELL_LIMIT else text[: _CELL_LIMIT - 1] + "…"


def _where(change: ContractChange) -> str:
    path = f" {change['path']}" if change.get("path") else ""
    return f"{change.get('list')}/{change.get('name')}{path}"


def _rule(change: ContractChange) -> str:
    return str(change.get("rule") or change.get("kind"))


SECTIONS = (
    ("break clients", "Breaks clients"),
    ("dangerous", "Dangerous: still valid, no longer the same meaning"),
    ("affect models", "Affects models"),
    ("other", "Other changes"),
)
"""(the summary's word, the Markdown section's title) for each kind, worst first."""


def section_of(change: ContractChange) -> str:
    """The one section a change is listed in: the worst of its kinds (a breaking change that also affects
    models is listed, and counted, as breaking)."""
    if change.get("breaksClients"):
        return "break clients"
    if change.get("grade") == "dangerous":
        return "dangerous"
    return "affect models" if change.get("affectsModels") else "other"


def _summary_line(report: ContractDiff) -> str:
    """Each change counted once, under its section: the header's numbers are the sections' sizes."""
    changes = report.get("changes") or []
    counts = {word: sum(1 for c in changes if section_of(c) == word) for word, _ in SECTIONS}
    parts = [f"{n} {word}" for word, n in counts.items() if n or word == "break clients"]
    line = f"{len(changes)} change(s): {', '.join(parts)}"
    accepted = len(report.get("accepted") or [])
    return line + (f"; {accepted} accepted" if accepted else "")


# -- markdown --------------------------------------------------------------------------------------


def _code(text: str) -> str:
    """An inline code span that survives backticks and pipes inside a table cell."""
    if not text:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}".replace("|", "\\|")


def _markdown(report: ContractDiff) -> str:
    changes = report.get("changes") or []
    lines = [
        f"## Contract diff: {_code(str(report.get('baseline')))} → {_code(str(report.get('candidate')))}",
        "",
        f"**{_summary_line(report)}.**",
        "",
    ]
    # The client profile a change was seen under, shown when the snapshots were taken under several.
    profiled = any(c.get("profile") for c in [*changes, *(report.get("lints") or [])])
    groups = (
        *((title, [c for c in changes if section_of(c) == word]) for word, title in SECTIONS),
        ("Lints", list(report.get("lints") or [])),
    )
    for title, group in groups:
        if not group:
            continue
        lines += [
            f"### {title} ({len(group)})",
            "",
            "| Era |" + (" Profile |" if profiled else "") + " List | Name | Path | Change | Before | After |",
            "|---|" + ("---|" if profiled else "") + "---|---|---|---|---|---|",
        ]
        for c in group:
            change = _code(_rule(c)) + (f" — {_value(c['hint'])}".replace("|", "\\|") if c.get("hint") else "")
            cells = [
                c.get("era") or "",
                *([c.get("profile") or ""] if profiled else []),
                str(c.get("list")),
                _code(str(c.get("name"))),
                _code(c.get("path") or ""),
                change,
                _code(_value(c.get("before"))),
                _code(_value(c.get("after"))),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    if not changes:
        lines += ["No contract changes.", ""]
    accepted = report.get("accepted") or []
    if accepted:
        lines += [
            f"### Accepted ({len(accepted)})",
            "",
            "| Era | List | Name | Path | Change | Reason | Expires |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in accepted:
            why = c.get("accepted") or {}
            by = f" ({why['by']})" if why.get("by") else ""
            cells = [
                c.get("era") or "",
                str(c.get("list")),
                _code(str(c.get("name"))),
                _code(c.get("path") or ""),
                _code(_rule(c)),
                (_value(why.get("reason")) + by).replace("|", "\\|"),
                str(why.get("expires") or ""),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    stale = (report.get("acceptance") or {}).get("stale") or []
    if stale:
        lines += ["Stale acceptances (matched nothing):", ""]
        lines += [f"- {_code(str(e.get('rule')))} {e.get('list')}/{_code(str(e.get('name')))}" for e in stale] + [""]
    notes = report.get("notes") or []
    if notes:
        lines += ["Notes:", ""] + [f"- {note}" for note in notes] + [""]
    return "\n".join(lines)


# -- junit -----------------------------------------------------------------------------------------


def _junit(report: ContractDiff, fail_on: str) -> str:
    changes = [*(report.get("changes") or []), *(report.get("lints") or [])]
    failures = sum(1 for c in changes if at_level(c, fail_on))
    tests = max(len(changes), 1)
    root = ET.Element("testsuites", name="mcp-watcher contract diff", tests=str(tests), failures=str(failures))
    suite = ET.SubElement(
        root,
        "testsuite",
        name=f"contract {report.get('baseline')} -> {report.get('candidate')}",
        tests=str(tests),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    for c in changes:
        era = f" [{c['era']}]" if c.get("era") else ""
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"contract.{c.get('list')}",
            name=f"{c.get('name')} {c.get('path') or ''} {_rule(c)}{era}".replace("  ", " "),
        )
        detail = _detail(c)
        if at_level(c, fail_on):
            failure = ET.SubElement(case, "failure", type=_rule(c), message=_message(c))
            failure.text = detail
        else:
            ET.SubElement(case, "system-out").text = detail
    for c in report.get("accepted") or []:
        why = c.get("accepted") or {}
        case = ET.SubElement(
            suite, "testcase", classname=f"contract.{c.get('list')}", name=f"{c.get('name')} {_rule(c)} (accepted)"
        )
        message = f"accepted until {why.get('expires')}: {why.get('reason')}"
        ET.SubElement(case, "skipped", message=message).text = _detail(c)
    skipped = len(report.get("accepted") or [])
    if skipped:
        tests += skipped
        root.set("tests", str(tests))
        suite.set("tests", str(tests))
        suite.set("skipped", str(skipped))
    if not changes:
        ET.SubElement(suite, "testcase", classname="contract", name="no contract changes")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _message(c: ContractChange) -> str:
    effects = [
        label
        for flag, label in ((c.get("breaksClients"), "breaks clients"), (c.get("affectsModels"), "affects models"))
        if flag
    ]
    return f"{_rule(c)} at {_where(c)}" + (f" ({', '.join(effects)})" if effects else "")


def _detail(c: ContractChange) -> str:
    lines = [_message(c)]
    if c.get("before") is not None or c.get("after") is not None:
        lines.append(f"before: {_value(c.get('before'))}")
        lines.append(f"after: {_value(c.get('after'))}")
    if c.get("hint"):
        lines.append(f"hint: {c['hint']}")
    if c.get("era"):
        lines.append(f"era: {c['era']}")
    if c.get("profile"):
        lines.append(f"profile: {c['profile']}")
    return "\n".join(lines)


# -- github ----------------------------------------------------------------------------------------


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(report: ContractDiff, fail_on: str) -> str:
    lines = []
    for c in [*(report.get("changes") or []), *(report.get("lints") or [])]:
        if at_level(c, fail_on):
            level = "error"
        elif c.get("breaksClients") or c.get("affectsModels"):
            level = "warning"
        else:
            level = "notice"
        title = _escape_property(f"MCP contract: {_rule(c)} ({c.get('list')}/{c.get('name')})")
        lines.append(f"::{level} title={title}::{_escape_data(_detail(c))}")
    for c in report.get("accepted") or []:
        why = c.get("accepted") or {}
        title = _escape_property(f"MCP contract (accepted): {_rule(c)} ({c.get('list')}/{c.get('name')})")
        text = f"accepted until {why.get('expires')}: {why.get('reason')}\n{_detail(c)}"
        lines.append(f"::notice title={title}::{_escape_data(text)}")
    summary = f"{_summary_line(report)} ({report.get('baseline')} → {report.get('candidate')})"
    lines.append(f"::notice title={_escape_property('MCP contract diff')}::{_escape_data(summary)}")
    return "\n".join(lines) + "\n"
