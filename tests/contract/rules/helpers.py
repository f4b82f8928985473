"""Helpers for the per-family rule tests: minimal before/after pairs run through the real diff, and the
one check every case makes (the rule fires, at the expected path, with its grade)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.contract.helpers import obj, server_record, tool, write_snapshot
from watcher.contract.diff import compare_list, diff_snapshots
from watcher.contract.normalize import LIST_BY_NAME
from watcher.contract.report import change_json
from watcher.contract.rules import RULES, errors, server
from watcher.contract.rules.base import Change, Compared

Changes = list[dict[str, Any]]
"""Changes in the report's JSON shape, as a reader of the report sees them."""

Case = tuple[str, str, str | None, bool, bool, Callable[[], Changes]]
"""(case id, rule id, expected path, breaksClients, affectsModels, produce the changes)."""

STR = {"type": "string"}
INT = {"type": "integer"}
NULLABLE_STR = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}


def as_json(changes: list[Change]) -> Changes:
    return [change_json(change) for change in changes]


def list_diff(
    list_name: str, before: list[dict[str, Any]], after: list[dict[str, Any]], lints: bool = False
) -> Changes:
    """The list's changes; evolution lints only with `lints` (a report keeps them apart, under `lints`)."""
    spec = LIST_BY_NAME[list_name]
    found = compare_list(spec, {e[spec.key]: e for e in before}, {e[spec.key]: e for e in after})
    return as_json([change for change in found if lints or not change.rule.lint])


def tools_diff(before: list[dict[str, Any]], after: list[dict[str, Any]], lints: bool = False) -> Changes:
    return list_diff("tools", before, after, lints)


def schema_diff(before: dict[str, Any], after: dict[str, Any]) -> Changes:
    return tools_diff([tool("t", before)], [tool("t", after)])


def output_diff(before: dict[str, Any] | None, after: dict[str, Any] | None) -> Changes:
    def with_output(schema: dict[str, Any] | None) -> dict[str, Any]:
        return tool("t", obj({})) if schema is None else tool("t", obj({}), outputSchema=schema)

    return tools_diff([with_output(before)], [with_output(after)])


def prompt(name: str, *arguments: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"name": name, "description": f"The {name} prompt.", "arguments": list(arguments), **fields}


def server_diff(before: dict[str, Any], after: dict[str, Any], era_bound: bool = True) -> Changes:
    """server.json records built from `server_record` with these fields overridden."""
    return server_records_diff(server_record(**before), server_record(**after), era_bound)


def server_records_diff(before: dict[str, Any], after: dict[str, Any], era_bound: bool = True) -> Changes:
    compared = Compared(list_name="server", name="server", before=before, after=after, era_bound=era_bound)
    return as_json(list(server.check(compared)))


def errors_diff(before: dict[str, Any], after: dict[str, Any]) -> Changes:
    return as_json(list(errors.check(Compared(list_name="errors", name="errors", before=before, after=after))))


def assert_case_fires(case: Case) -> None:
    _, rule_id, path, breaks, models, produce = case
    changes = produce()
    matching = [c for c in changes if c["rule"] == rule_id]
    assert matching, f"{rule_id} not reported; got {[c['rule'] for c in changes]}"
    change = matching[0]
    assert change["path"] == path
    assert change["breaksClients"] is breaks
    assert change["affectsModels"] is models
    assert change["kind"] == RULES[rule_id].reported_kind
    assert set(change) >= {"list", "name", "path", "kind", "before", "after", "breaksClients", "affectsModels"}


PROFILE_CAPABILITIES = {"typical": ["roots", "sampling", "elicitation"], "none": []}


def write_profiles(root: Path, tools_by_profile: Mapping[str, list[dict[str, Any]]]) -> Path:
    """A snapshot taken under several client profiles, as `snapshot` lays it out: the first profile in
    `root`, each other one in `root/profiles/<name>/` (one era, modern)."""
    manifest = []
    for index, (name, tools) in enumerate(tools_by_profile.items()):
        record = {"name": name, "capabilities": PROFILE_CAPABILITIES.get(name, name.split(","))}
        manifest.append(record)
        folder = root if index == 0 else root / "profiles" / name
        write_snapshot(folder, tools=tools, server=server_record(clientProfile=record))
    first = manifest[0]
    (root / "snapshot.json").write_text(json.dumps({"clientProfile": first, "clientProfiles": manifest}))
    return root


def profiles_diff(before: Mapping[str, list[dict[str, Any]]], after: Mapping[str, list[dict[str, Any]]]) -> Changes:
    """The changes between two snapshots taken under several client profiles ({profile: tools})."""
    with tempfile.TemporaryDirectory() as tmp:
        base = write_profiles(Path(tmp) / "base", before)
        cand = write_profiles(Path(tmp) / "cand", after)
        changes: Changes = diff_snapshots(base, cand)["changes"]
        return changes
