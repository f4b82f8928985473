"""Family `renames`: a tool or prompt removed while another with a similar name and a compatible input
appears is one rename, not a removal plus an addition (`getWidget` → `get-widget`, `add` → `sum_numbers`
with the same two numeric parameters).

A rename still breaks every client that calls the old name, and every host permission that names it
(`mcp__<server>__<old>`); the report says so, with the evidence that paired the two (the confidence
basis) and the usual remedy: keep the old name as a deprecated alias for a release.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from watcher.contract.rules.base import Change, Compared, Rule, make_change
from watcher.contract.schema_diff import canonical, strip_titles

FAMILY = "renames"
TOOL_RENAMED = Rule(
    id="tool_renamed",
    family=FAMILY,
    doc="A tool was renamed (a removal paired with an addition of a similar name and compatible input): calls "
    "and host permissions naming the old name fail; keep it as a deprecated alias for a release.",
    breaks_clients=True,
    affects_models=True,
)
PROMPT_RENAMED = Rule(
    id="prompt_renamed",
    family=FAMILY,
    doc="A prompt was renamed (paired like tools): prompts/get with the old name fails; keep it as an alias "
    "for a release.",
    breaks_clients=True,
    affects_models=True,
)

RULES = (TOOL_RENAMED, PROMPT_RENAMED)
_BY_LIST = {"tools": TOOL_RENAMED, "prompts": PROMPT_RENAMED}
SERVER_PLACEHOLDER = "<server>"


@dataclass(frozen=True, slots=True)
class Rename:
    old: str
    new: str
    basis: tuple[str, ...]
    """Why the two were paired, e.g. ("same name once case and separators are ignored", "same parameters")."""
    score: float


def check(compared: Compared) -> Iterator[Change]:
    """`compared.before` / `.after`: the removed and added entries of one list ({name: entry})."""
    rule = _BY_LIST.get(compared.list_name)
    if rule is None:
        return
    server = compared.server_name or SERVER_PLACEHOLDER
    for rename in pair(compared.list_name, compared.before, compared.after):
        hint = (
            f"renamed ({'; '.join(rename.basis)}); still breaking for clients that call {rename.old!r}: keep "
            f"{rename.old!r} as a deprecated alias for a release"
        )
        if compared.list_name == "tools":
            hint += f"; host permission mcp__{server}__{rename.old} stops matching (now mcp__{server}__{rename.new})"
        yield make_change(rule, compared.list_name, rename.old, None, rename.old, rename.new, hint)


def pair(list_name: str, removed: Mapping[str, Any], added: Mapping[str, Any]) -> list[Rename]:
    """The renames among entries found on one side only, best evidence first, each entry in one pair at most."""
    if list_name not in _BY_LIST or not removed or not added:
        return []
    candidates = [
        rename
        for old, old_entry in removed.items()
        for new, new_entry in added.items()
        if (rename := _judge(list_name, old, old_entry, new, new_entry, removed, added)) is not None
    ]
    candidates.sort(key=lambda r: (-r.score, r.old, r.new))
    taken_old: set[str] = set()
    taken_new: set[str] = set()
    pairs = []
    for rename in candidates:
        if rename.old in taken_old or rename.new in taken_new:
            continue
        taken_old.add(rename.old)
        taken_new.add(rename.new)
        pairs.append(rename)
    return sorted(pairs, key=lambda r: r.old)


NAME_THRESHOLD = 0.8
"""Name evidence needed to pair on names (with parameters that agree at `SHARED_THRESHOLD`)."""
SHARED_THRESHOLD = 0.5
"""Jaccard index of parameter names (shared / all) needed beside a name match."""
DESCRIPTION_THRESHOLD = 0.4
"""Description evidence needed to pair two unrelated names on identical parameters alone."""
STEM = 5
"""Words are compared by their first five letters (samples, sampling → "sampl"): a stemmer small enough to read."""


def _judge(
    list_name: str,
    old: str,
    old_entry: Any,
    new: str,
    new_entry: Any,
    removed: Mapping[str, Any],
    added: Mapping[str, Any],
) -> Rename | None:
    """The evidence that `old` became `new`, or None when it is too weak (see docs/contract-rules.md, renames).

    Measures, each in [0, 1]: name — 1 for the same words once case and separators are ignored, 0.85 when
    one name's words all appear in the other, else the Dice coefficient of their word stems; parameters —
    1 for the same names and shapes, else the Jaccard index of their names (0.2 when neither takes any);
    description — the Dice coefficient of the descriptions' word stems. A pair needs a compatible input
    (the new entry requires nothing the old one lacked) and either name ≥ 0.8 with parameters ≥ 0.5 (or
    neither taking any), or identical parameters (two or more, found on no other removed or added entry)
    with a description ≥ 0.4.
    """
    params_old, params_new = _parameters(list_name, old_entry), _parameters(list_name, new_entry)
    required_new = _required(list_name, new_entry)
    if not required_new <= set(params_old):
        return None  # a call made with the old arguments would lack a required one: not compatible
    name_basis, name_score = _name_similarity(old, new)
    description_score = _dice(_stems(_description(old_entry)), _stems(_description(new_entry)))
    union = set(params_old) | set(params_new)
    shared = set(params_old) & set(params_new)
    if params_old and params_old == params_new:
        schema_basis, schema_score = "same parameters", 1.0
    elif not union:
        schema_basis, schema_score = "neither takes parameters", 0.2
    else:
        schema_score = len(shared) / len(union)
        schema_basis = f"shares parameters {', '.join(sorted(shared))}" if shared else "no parameter in common"
    score = name_score + schema_score + description_score / 2
    if name_score >= NAME_THRESHOLD and (schema_score >= SHARED_THRESHOLD or not union):
        return Rename(old, new, (name_basis, schema_basis), score)
    # On parameters alone, only a distinctive input with a matching purpose counts: two entries taking
    # (owner, repo) are not one renamed entry unless their descriptions say the same thing.
    if (
        params_old == params_new
        and len(params_old) >= 2
        and description_score >= DESCRIPTION_THRESHOLD
        and _unique_schema(list_name, old_entry, removed, added)
    ):
        basis = ("the only entries with this input schema", schema_basis, f"descriptions {description_score:.0%} alike")
        return Rename(old, new, basis, score)
    return None


def _unique_schema(list_name: str, entry: Any, removed: Mapping[str, Any], added: Mapping[str, Any]) -> bool:
    """The removed entry's parameters match exactly one added entry and no other removed one."""
    signature = canonical(_parameters(list_name, entry))
    same_added = [k for k, e in added.items() if canonical(_parameters(list_name, e)) == signature]
    same_removed = [k for k, e in removed.items() if canonical(_parameters(list_name, e)) == signature]
    return len(same_added) == 1 and len(same_removed) == 1


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def _stems(text: str) -> set[str]:
    return {word[:STEM] for word in _words(text) if len(word) >= 3 or word.isdigit()}


def _dice(a: set[str], b: set[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def _description(entry: Any) -> str:
    text = entry.get("description") if isinstance(entry, dict) else None
    return text if isinstance(text, str) else ""


def _name_similarity(old: str, new: str) -> tuple[str, float]:
    flat_old, flat_new = "".join(_words(old)), "".join(_words(new))
    if flat_old == flat_new:
        return "same name once case and separators are ignored", 1.0
    words_old, words_new = set(_words(old)), set(_words(new))
    if len(flat_old) >= 4 and words_old <= words_new:
        return f"new name {new!r} contains every word of {old!r}", 0.85
    if len(flat_new) >= 4 and words_new <= words_old:
        return f"old name {old!r} contains every word of {new!r}", 0.85
    stems_old = {w[:STEM] for w in words_old}
    stems_new = {w[:STEM] for w in words_new}
    ratio = _dice(stems_old, stems_new)
    return f"names share {ratio:.0%} of their word stems", ratio


def _parameters(list_name: str, entry: Any) -> dict[str, Any]:
    """{parameter: its schema (tools) or its declaration (prompts)}, titles and descriptions left out."""
    if not isinstance(entry, dict):
        return {}
    if list_name == "tools":
        schema = entry.get("inputSchema")
        props = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(props, dict):
            return {}
        return {name: _shape(value) for name, value in props.items()}
    return {
        a["name"]: bool(a.get("required"))
        for a in entry.get("arguments") or []
        if isinstance(a, dict) and isinstance(a.get("name"), str)
    }


def _shape(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            k: _shape(v) for k, v in strip_titles(schema).items() if k not in ("description", "default", "examples")
        }
    return schema


def _required(list_name: str, entry: Any) -> set[str]:
    if not isinstance(entry, dict):
        return set()
    if list_name == "tools":
        schema = entry.get("inputSchema")
        required = schema.get("required") if isinstance(schema, dict) else None
        return {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    return {a["name"] for a in entry.get("arguments") or [] if isinstance(a, dict) and a.get("required")}
