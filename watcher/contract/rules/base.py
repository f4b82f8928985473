"""The three records every rule family shares: a `Rule` (one named kind of change and its grade),
a `Change` (one occurrence of a rule, found between two snapshots) and `Compared` (what a family's
`check` is asked to compare: one thing as the baseline has it and as the candidate has it).

A family is a module with `RULES` (its rules, in the order the rules document lists them) and
`check(compared) -> Iterator[Change]`. The report's JSON form of a change is made in `report.py`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One named kind of contract change. Its grade (the two report flags) is set here and nowhere else."""

    id: str
    """Stable id, reported as `rule` (and as `kind`, unless `kind` is set)."""
    family: str
    """The module that declares it, e.g. "input_schema"."""
    doc: str
    """One line for the rules document: what changed and what it does to clients or models."""
    breaks_clients: bool
    """A client written against the baseline fails, or silently misbehaves, against the candidate."""
    affects_models: bool
    """What a model reads changed, so it may choose tools or arguments differently."""
    gray: bool = False
    """Breaks no call, yet an old client may misread the result; shown as "no (gray)" in the document."""
    dangerous: bool = False
    """Breaks no call, yet an old call now means something else (a value silently ignored, a pattern whose
    change cannot be judged): graded `dangerous`, apart from breaking, like graphql-inspector's "dangerous"."""
    lint: bool = False
    """An evolution lint: breaks nothing by itself, reported with grade `lint` (fails only `--fail-on lints`)."""
    kind: str | None = None
    """The report's `kind` when it differs from the id (list entries report `added` / `removed`)."""

    def __post_init__(self) -> None:
        if not self.id or self.id != self.id.lower() or " " in self.id:
            raise ValueError(f"rule id {self.id!r}: expected lower_snake_case")
        if not self.doc or "\n" in self.doc:
            raise ValueError(f"rule {self.id!r}: doc must be one non-empty line")
        if self.lint and self.breaks_clients:
            raise ValueError(f"rule {self.id!r}: a lint breaks no client; breaks_clients must be False")
        if self.gray and self.breaks_clients:
            raise ValueError(f"rule {self.id!r}: gray means it breaks no client; breaks_clients must be False")
        if self.dangerous and (self.breaks_clients or self.lint):
            raise ValueError(
                f"rule {self.id!r}: dangerous is a grade of its own; breaks_clients and lint must be False"
            )

    @property
    def reported_kind(self) -> str:
        return self.kind or self.id


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One change found between the baseline and the candidate, graded by its rule."""

    rule: Rule
    list_name: str
    """Where it was found: "tools", "prompts", "resources", "resource-templates", "server" or "errors"."""
    name: str
    """The entry it belongs to (a tool's name, a resource's URI, a protocol version…)."""
    path: str | None
    """Dotted path inside the entry (e.g. "inputSchema.properties.q"); None for a whole entry."""
    before: Any = None
    """The baseline's value at `path` (plain JSON)."""
    after: Any = None
    """The candidate's value at `path` (plain JSON)."""
    hint: str | None = None
    """A note for the reader, e.g. the tool a removed one was likely renamed to."""
    era: str | None = None
    """The protocol era it was found in ("legacy", "modern" or "both"); None when eras were not paired."""
    profile: str | None = None
    """The client profile(s) it was seen under ("none", "typical", "none, typical"); None when the
    snapshots record no profile."""

    @property
    def kind(self) -> str:
        return self.rule.reported_kind

    @property
    def breaks_clients(self) -> bool:
        return self.rule.breaks_clients

    @property
    def affects_models(self) -> bool:
        return self.rule.affects_models

    @property
    def grade(self) -> str:
        return grade_of(self.rule.breaks_clients, self.rule.affects_models, self.rule.lint, self.rule.dangerous)


@dataclass(frozen=True, slots=True, kw_only=True)
class Compared:
    """What a family's `check` compares: one thing in the baseline (`before`) and in the candidate (`after`).

    For a list entry, `before` / `after` are the entry's JSON objects, and one of them is None when the
    entry is new or gone. For the lists family they are the entries found on one side only
    ({key: entry}); for the server and errors families, the server.json / errors.json records.
    """

    list_name: str
    name: str
    """The entry's key (tool or prompt name, resource URI, template); the list name for whole records."""
    before: Any
    after: Any
    path: str = ""
    """Where `before` / `after` sit inside the entry ("" for the entry itself, e.g. "arguments.genre")."""
    today: dt.date | None = None
    """The date the comparison is made on (for notices that name a date); None: not compared with dates."""
    server_name: str | None = None
    """The server's configured name, when known (host permission names are `mcp__<server>__<tool>`)."""
    era_bound: bool = True
    """False when the two sides were taken in different protocol eras: what is negotiated per era
    (protocol versions, capabilities, the unsupported-version probe) is then not compared."""

    @property
    def both_sides(self) -> bool:
        """Present in baseline and candidate (False for a new or a removed entry)."""
        return self.before is not None and self.after is not None


class Family(Protocol):
    """A rule family module: its rules and its one entry point."""

    @property
    def RULES(self) -> tuple[Rule, ...]: ...

    def check(self, compared: Compared) -> Iterator[Change]: ...


def grade_of(breaks_clients: bool, affects_models: bool, lint: bool = False, dangerous: bool = False) -> str:
    """The one-word grade: "breaking", "dangerous", "models", "lint" or "info"."""
    if breaks_clients:
        return "breaking"
    if dangerous:
        return "dangerous"
    if affects_models:
        return "models"
    return "lint" if lint else "info"


def make_change(
    rule: Rule,
    list_name: str,
    name: str,
    path: str | None,
    before: Any = None,
    after: Any = None,
    hint: str | None = None,
) -> Change:
    """A change of `rule` at `list_name`/`name`/`path`; an empty hint counts as none."""
    return Change(rule=rule, list_name=list_name, name=name, path=path, before=before, after=after, hint=hint or None)


def join_path(*parts: str | None) -> str:
    """Join dotted path parts, skipping empty ones ("inputSchema" + "" → "inputSchema")."""
    return ".".join(p for p in parts if p)
