"""The verdicts that differ between two `diff --format json` reports of one case, each with the reason it changed.

A verdict is one reported change: where (list, entry, path, era, profile), which rule, which grade. Two reports
of the same pair of snapshots are compared verdict by verdict; a verdict of the reference paired with one of
this checkout at the same place (or below it: `anyOf` → `anyOf[string].enum`) is a regrading, an unpaired one
is gone or new. `reason` names the rule of the diff that explains it (issue 36's: accepted sets, keywords in
view, a format change alone, what the spec defines); None when none does, which verdicts_unchanged.py fails on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "enum", "const")
CAPABILITY_RULES = frozenset({"capability_removed", "capability_added", "capability_changed"})
FORMAT_RULES = frozenset({"format_changed", "output_format_changed"})
EXPERIMENTAL_RULES = frozenset({"experimental_capability_removed", "experimental_capability_changed"})

IN_VIEW = (
    "judged with the node's other keywords in view (pattern, enum, lengths, format read as its set): no string "
    "a client could send changed its fate"
)
VALUE_SETS = "value members compared as value sets (enum, const, anyOf / oneOf of const), not by spelling"
FORMAT_ALONE = "a change of format alone is dangerous: whether the server enforces a format cannot be read"
NOT_SPEC = "not a capability the spec defines for the negotiated revision: no client negotiates on it"
EXPERIMENTAL = "an experimental entry: non-standard, graded dangerous and named entry by entry"


@dataclass(frozen=True, slots=True)
class Verdict:
    list_name: str
    name: str
    path: str | None
    era: str | None
    profile: str | None
    rule: str
    grade: str

    @property
    def place(self) -> tuple[str, str, str | None, str | None]:
        return (self.list_name, self.name, self.era, self.profile)

    def shown(self) -> str:
        where = f"{self.list_name} {self.name}" + (f" {self.path}" if self.path else "")
        context = ", ".join(part for part in (self.era, self.profile) if part)
        return where + (f" [{context}]" if context else "")


@dataclass(frozen=True, slots=True)
class VerdictChange:
    before: Verdict | None
    after: Verdict | None
    reason: str | None

    def shown(self) -> str:
        place = (self.before or self.after).shown()  # type: ignore[union-attr]
        old = f"{self.before.rule} ({self.before.grade})" if self.before else "nothing"
        new = f"{self.after.rule} ({self.after.grade})" if self.after else "nothing"
        return f"{place}: {old} → {new}: {self.reason or 'UNEXPLAINED'}"

    @property
    def was_breaking(self) -> bool:
        return self.before is not None and self.before.grade == "breaking"

    @property
    def is_breaking(self) -> bool:
        return self.after is not None and self.after.grade == "breaking"


def verdicts(report: dict[str, Any]) -> set[Verdict]:
    return {
        Verdict(c["list"], c["name"], c["path"], c.get("era"), c.get("profile"), c["rule"], c["grade"])
        for c in report.get("changes", [])
    }


def changed_verdicts(before: Iterable[Verdict], after: Iterable[Verdict]) -> list[VerdictChange]:
    old, new = set(before), set(after)
    gone, came = sorted(old - new, key=_order), sorted(new - old, key=_order)
    changes: list[VerdictChange] = []
    for verdict in gone:
        partner = _partner(verdict, came)
        if partner is not None:
            came.remove(partner)
        changes.append(VerdictChange(verdict, partner, explain(verdict, partner)))
    changes += [VerdictChange(None, verdict, explain(None, verdict)) for verdict in came]
    return changes


def _partner(verdict: Verdict, candidates: list[Verdict]) -> Verdict | None:
    """The new verdict at the same place and path, else one below the old path (`x.anyOf` → `x.anyOf[string]…`)."""
    here = [c for c in candidates if c.place == verdict.place]
    same = [c for c in here if c.path == verdict.path]
    if same:
        return same[0]
    if not verdict.path:
        return None
    below = [c for c in here if c.path and c.path.startswith((verdict.path + ".", verdict.path + "["))]
    return below[0] if below else None


def explain(before: Verdict | None, after: Verdict | None) -> str | None:
    """Why a verdict changed, as one of the diff's rules says; None when no rule of this change explains it."""
    path = (before or after).path or ""  # type: ignore[union-attr]
    rule_after = after.rule if after else None
    if rule_after in FORMAT_RULES and path.endswith(".format"):
        return FORMAT_ALONE
    if rule_after == "non_spec_capability_changed" and (before is None or before.rule in CAPABILITY_RULES):
        return NOT_SPEC
    if (
        rule_after in EXPERIMENTAL_RULES
        or path == "capabilities.experimental"
        or (path.startswith("capabilities.experimental.") and (before is None or before.rule in CAPABILITY_RULES))
    ):
        return EXPERIMENTAL
    last = path.rsplit(".", 1)[-1]
    union_member = "anyOf[" in path or "oneOf[" in path
    if last in ("anyOf", "oneOf") or (union_member and last in ("enum", "const")) or "[const:" in path:
        return VALUE_SETS
    if last in STRING_KEYWORDS and (before is None or after is None or before.rule != after.rule):
        return IN_VIEW
    return None


def _order(verdict: Verdict) -> tuple[str, ...]:
    return (verdict.list_name, verdict.name, verdict.path or "", verdict.era or "", verdict.profile or "", verdict.rule)
