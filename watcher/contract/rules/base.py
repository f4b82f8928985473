"""The rule record and the change record every family emits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Rule:
    """One named kind of contract change. Severity lives here, nowhere else."""

    id: str
    family: str
    doc: str
    breaks_clients: bool
    affects_models: bool
    kind: str | None = None
    """The report's `kind` when it differs from the id (list entries report `added` / `removed`)."""
    gray: bool = False
    """Breaks no call, yet an old client may misread the result (the seeds' "gray" zone)."""

    @property
    def reported_kind(self) -> str:
        return self.kind or self.id


def make_change(
    rule: Rule,
    list_name: str,
    name: str,
    path: str | None,
    before: Any = None,
    after: Any = None,
    hint: str | None = None,
) -> dict[str, Any]:
    """A change in the seeds' report shape, plus the stable rule id (and a hint when there is one)."""
    change: dict[str, Any] = {
        "list": list_name,
        "name": name,
        "path": path,
        "kind": rule.reported_kind,
        "before": before,
        "after": after,
        "breaksClients": rule.breaks_clients,
        "affectsModels": rule.affects_models,
        "rule": rule.id,
    }
    if hint:
        change["hint"] = hint
    return change


def join_path(*parts: str | None) -> str:
    """Join dotted path parts, skipping empty ones ("inputSchema" + "" → "inputSchema")."""
    return ".".join(p for p in parts if p)
