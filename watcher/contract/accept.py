"""Accepted drift and severity overrides: how a team steers the verdict without editing code.

An accept file (YAML, a list of entries, owned by the team next to its baseline snapshot) names changes
the team knows about, with a reason and an expiry date. A change matching an entry that has not expired
moves from `changes` to `accepted` and no longer fails a run; an expired entry matches nothing and the
report says so; an entry that matched nothing is listed as stale. Severity overrides (`contract.levels`)
re-grade a rule: breaking, models, info or ignore, the original grade kept beside the new one.

Both work on the report's JSON form, so a stored report can be steered the same way as a fresh one.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator

from watcher.contract.rules import RULES
from watcher.contract.rules.base import grade_of
from watcher.core import untrusted
from watcher.core.configfile import validate_with_lines
from watcher.core.contract_doc import AcceptedWhy, AcceptEntryRecord, ContractChange, ContractDiff, ContractSummary
from watcher.core.errors import ConfigError

LIST_NAMES: dict[str, str] = {
    "tools": "tools",
    "prompts": "prompts",
    "resources": "resources",
    "resourceTemplates": "resource-templates",
    "server": "server",
    "errors": "errors",
}
"""The accept file's `list` values → the report's `list` values."""
LEVEL_CHOICES = ("breaking", "models", "info", "ignore")


class AcceptError(Exception):
    """A bad accept file; the message names the file, the line and the key."""


class AcceptEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    rule: str
    list_name: Literal["tools", "prompts", "resources", "resourceTemplates", "server", "errors"] = Field(alias="list")
    name: str
    path: str | None = None
    """Matches a change whose path starts with this (None: any path of the entry)."""
    reason: str = Field(min_length=1)
    expires: dt.date
    by: str | None = None

    @field_validator("rule")
    @classmethod
    def _known_rule(cls, value: str) -> str:
        if value not in RULES:
            raise ValueError(f"unknown rule id {value!r} (see docs/contract-rules.md)")
        return value

    @field_validator("reason")
    @classmethod
    def _said(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("say why the change is accepted")
        return value

    def matches(self, change: ContractChange) -> bool:
        return (
            change.get("rule") == self.rule
            and change.get("list") == LIST_NAMES[self.list_name]
            and change.get("name") == self.name
            and (self.path is None or str(change.get("path") or "").startswith(self.path))
        )

    def record(self) -> AcceptedWhy:
        return {"reason": self.reason, "expires": self.expires.isoformat(), "by": self.by}

    def as_record(self, *, keep_none: bool = False) -> AcceptEntryRecord:
        """The entry as the report names it: `model_dump(mode="json", by_alias=True)`, its None fields left out
        unless `keep_none`, typed."""
        record: AcceptEntryRecord = {"rule": self.rule, "list": self.list_name, "name": self.name}
        if self.path is not None or keep_none:
            record["path"] = self.path
        record.update({"reason": self.reason, "expires": self.expires.isoformat()})
        if self.by is not None or keep_none:
            record["by"] = self.by
        return record

    def label(self) -> str:
        path = f" {self.path}" if self.path else ""
        return f"{self.rule} {self.list_name}/{self.name}{path}"


class _AcceptFile(RootModel[list[AcceptEntry]]):
    pass


@dataclass(frozen=True)
class AcceptFile:
    path: str
    entries: tuple[AcceptEntry, ...]


def load_accept_file(path: Path, root: Path | None = None) -> AcceptFile:
    """Read and validate an accept file; an absent or empty file accepts nothing. With `root` (a tree someone
    else filled, such as a checked-out repository) the file is reached without following a link."""
    try:
        if not (path.exists() if root is None else untrusted.exists_under(root, path)):
            return AcceptFile(str(path), ())
        data = untrusted.read_bytes(root, path, limits=untrusted.ACCEPT_FILE)
    except ConfigError as exc:
        raise AcceptError(str(exc)) from exc
    return parse_accept_file(data, str(path))


def parse_accept_file(text: str | bytes, filename: str) -> AcceptFile:
    try:
        data, lines = untrusted.yaml_document(
            text,
            filename,
            limits=untrusted.ACCEPT_FILE,
            expect=list,
            shape="a list of entries (rule, list, name, reason, expires…)",
        )
    except ConfigError as exc:
        raise AcceptError(str(exc)) from exc
    if not data:
        return AcceptFile(filename, ())
    try:
        entries = validate_with_lines(_AcceptFile, data, filename, lines).root
    except ConfigError as exc:
        raise AcceptError(str(exc)) from exc
    return AcceptFile(filename, tuple(entries))


def apply_acceptance(report: ContractDiff, accept: AcceptFile, today: dt.date) -> ContractDiff:
    """The report with accepted changes moved to `accepted` (each with `accepted: {reason, expires, by}`),
    and `acceptance: {file, stale, expired}` telling what the file did not do."""
    kept: list[ContractChange] = []
    accepted: list[ContractChange] = list(report.get("accepted") or [])
    used: set[int] = set()
    expired: dict[int, list[str]] = {}
    notes = list(report.get("notes") or [])
    for change in report.get("changes") or []:
        match = None
        for index, entry in enumerate(accept.entries):
            if not entry.matches(change):
                continue
            if entry.expires < today:
                expired.setdefault(index, []).append(f"{change.get('list')}/{change.get('name')}")
                continue
            match = index
            break
        if match is None:
            kept.append(change)
        else:
            used.add(match)
            accepted.append({**change, "accepted": accept.entries[match].record()})
    for index, where in sorted(expired.items()):
        entry = accept.entries[index]
        if index not in used:
            notes.append(
                f"acceptance expired on {entry.expires.isoformat()}: {entry.label()} ({entry.reason}); "
                f"reported again: {', '.join(where)}"
            )
    stale = [
        entry.as_record()
        for index, entry in enumerate(accept.entries)
        if index not in used and index not in expired and entry.expires >= today
    ]
    summary: ContractSummary = {
        **(report.get("summary") or ContractSummary()),
        "total": len(kept),
        "breaksClients": sum(1 for c in kept if c.get("breaksClients")),
        "affectsModels": sum(1 for c in kept if c.get("affectsModels")),
        "accepted": len(accepted),
    }
    return {
        **report,
        "changes": kept,
        "accepted": accepted,
        "summary": summary,
        "notes": notes,
        "acceptance": {
            "file": accept.path,
            "stale": stale,
            "expired": [accept.entries[i].as_record(keep_none=True) for i in sorted(expired)],
        },
    }


def parse_levels(items: list[str]) -> dict[str, str]:
    """`RULE=LEVEL` items (the diff command's --level) → {rule id: level}."""
    levels: dict[str, str] = {}
    for item in items:
        rule, sep, level = item.partition("=")
        if not sep:
            raise ValueError(f"{item!r}: expected RULE=LEVEL")
        levels[rule.strip()] = level.strip()
    check_levels(levels, "--level")
    return levels


def check_levels(levels: dict[str, str], where: str) -> None:
    for rule, level in levels.items():
        if rule not in RULES:
            raise ValueError(f"{where}: unknown rule id {rule!r} (see docs/contract-rules.md)")
        if level not in LEVEL_CHOICES:
            raise ValueError(f"{where}: {rule}: level must be one of {', '.join(LEVEL_CHOICES)}, not {level!r}")


def apply_levels(report: ContractDiff, levels: dict[str, str]) -> ContractDiff:
    """The report with every change of an overridden rule re-graded (`grade`, `breaksClients`,
    `affectsModels`), its `originalGrade` beside; `ignore` moves it to `ignored`."""
    if not levels:
        return report
    kept: list[ContractChange] = []
    ignored: list[ContractChange] = list(report.get("ignored") or [])
    for change in report.get("changes") or []:
        level = levels.get(str(change.get("rule")))
        if level is None:
            kept.append(change)
            continue
        original = change.get("grade") or grade_of(bool(change.get("breaksClients")), bool(change.get("affectsModels")))
        regraded: ContractChange = {
            **change,
            "grade": level,
            "originalGrade": original,
            "breaksClients": level == "breaking",
            "affectsModels": level == "models" or (level == "breaking" and bool(change.get("affectsModels"))),
        }
        (ignored if level == "ignore" else kept).append(regraded)
    summary: ContractSummary = {
        **(report.get("summary") or ContractSummary()),
        "total": len(kept),
        "breaksClients": sum(1 for c in kept if c.get("breaksClients")),
        "affectsModels": sum(1 for c in kept if c.get("affectsModels")),
    }
    return {**report, "changes": kept, "ignored": ignored, "summary": summary}


def accept_entries(
    report: ContractDiff, select: list[str], reason: str, expires: dt.date, by: str | None
) -> list[AcceptEntryRecord]:
    """Accept-file entries for the report's changes that `select` picks: each item is a rule id, a
    `list/name` or `rule:list/name` ("all" picks every change)."""
    reverse = {v: k for k, v in LIST_NAMES.items()}
    picked = []
    for change in report.get("changes") or []:
        where = f"{change.get('list')}/{change.get('name')}"
        keys = {"all", str(change.get("rule")), where, f"{change.get('rule')}:{where}"}
        if keys & set(select):
            entry: AcceptEntryRecord = {
                "rule": str(change.get("rule")),
                "list": reverse.get(str(change.get("list")), str(change.get("list"))),
                "name": str(change.get("name")),
            }
            if change.get("path"):
                entry["path"] = change["path"]
            entry.update({"reason": reason, "expires": expires.isoformat()})
            if by:
                entry["by"] = by
            if entry not in picked:
                picked.append(entry)
    return picked


def append_entries(path: Path, entries: list[AcceptEntryRecord]) -> None:
    """Append entries to an accept file (created when absent), after checking the result loads."""
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    if existing and not existing.endswith("\n"):
        existing += "\n"
    text = existing + yaml.safe_dump(entries, sort_keys=False, allow_unicode=True)
    parse_accept_file(text, str(path))
    path.write_text(text, encoding="utf-8")
