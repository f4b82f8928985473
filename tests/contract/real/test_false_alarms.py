"""The false-alarm classes found on real published servers, each pinned by the recorded snapshots it was
found in (tests/contract/fixtures/real/, see its README), and every true breaking change of those
snapshots still reported."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from watcher.contract.diff import diff_snapshots
from watcher.contract.schema_diff import MAX_SAFE_INTEGER, diff_schemas, effective_bounds

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
PAIRS = [
    ("everything", "2025.7.29", "2025.9.25"),
    ("everything", "2025.9.25", "2025.11.25"),
    ("everything", "2025.11.25", "2026.1.26"),
    ("everything", "2026.1.26", "2026.8.31"),
    ("filesystem", "2025.11.25", "2026.1.14"),
    ("filesystem", "2026.1.14", "2026.8.31"),
    ("fetch", "2025.4.7", "2026.6.4"),
    ("fetch", "2026.6.4", "2026.10.24"),
    ("time", "2025.9.25", "2026.1.26"),
    ("time", "2026.1.26", "2026.10.19"),
]
TRUE_BREAKING: dict[tuple[str, str, str], set[tuple[str, str]]] = {
    # startElicitation, offered to every client in 2025.7.29, only to clients that declare elicitation after.
    ("everything", "2025.7.29", "2025.9.25"): {("tool_requires_capability", "startElicitation")},
    ("everything", "2025.11.25", "2026.1.26"): {
        *{
            ("tool_renamed", name)
            for name in (
                "add",
                "annotatedMessage",
                "getResourceLinks",
                "getResourceReference",
                "getTinyImage",
                "listRoots",
                "longRunningOperation",
                "sampleLLM",
                "structuredContent",
            )
        },
        *{("tool_removed", name) for name in ("printEnv", "startElicitation", "zip")},
        # Under the bare client profile (none): sampleLLM was offered to every client; its successor
        # trigger-sampling-request only to clients that declare sampling. Hidden before the profiles existed.
        ("tool_removed", "sampleLLM"),
        # The renamed tool's enum replaced a free string: calls with other cities are rejected. Reported under
        # the old name, the one its callers know (the new name had no callers to break).
        ("type_narrowed", "structuredContent"),
        ("prompt_renamed", "simple_prompt"),
        *{("prompt_removed", name) for name in ("complex_prompt", "resource_prompt")},
        *{("resource_removed", f"test://static/resource/{n}") for n in range(1, 101)},
        ("resource_template_removed", "test://static/resource/{id}"),
        ("error_mode_changed", "missing_required_argument"),
        ("error_code_changed", "unknown_resource"),
        ("error_mode_changed", "unknown_tool"),
    },
    ("filesystem", "2026.1.14", "2026.8.31"): {("output_type_changed", "read_media_file")},
    ("fetch", "2026.6.4", "2026.10.24"): {("error_mode_changed", "unknown_tool")},
    ("time", "2026.1.26", "2026.10.19"): {("error_mode_changed", "unknown_tool")},
}
"""Read one by one: every change here really breaks a client written against the baseline (a rename
still breaks a client that calls the old name)."""


def _diff(server: str, old: str, new: str) -> dict[str, Any]:
    return diff_snapshots(REAL / server / old, REAL / server / new)


def _breaking(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(c["rule"], c["name"]) for c in report["changes"] if c["breaksClients"]}


@pytest.mark.parametrize(("server", "old", "new"), PAIRS, ids=[f"{s}-{a}-{b}" for s, a, b in PAIRS])
def test_real_pairs_report_exactly_the_true_breaking_changes(server: str, old: str, new: str) -> None:
    report = _diff(server, old, new)
    assert _breaking(report) == TRUE_BREAKING.get((server, old, new), set())


# -- 1. legacy protocol support read from one handshake -------------------------------------------


def test_probed_versions_show_the_old_revision_still_accepted() -> None:
    old = json.loads((REAL / "fetch" / "2025.4.7" / "server.json").read_text())
    new = json.loads((REAL / "fetch" / "2026.6.4" / "legacy" / "server.json").read_text())
    assert old["protocolVersion"] == "2024-11-05" and new["protocolVersion"] == "2025-11-25"
    assert "2024-11-05" in new["supportedVersions"] and new["supportedVersionsSource"] == "initialize-probes"
    report = _diff("fetch", "2025.4.7", "2026.6.4")
    assert not [c for c in report["changes"] if c["rule"] == "protocol_version_removed"]
    assert {c["name"] for c in report["changes"] if c["rule"] == "protocol_version_added"} == {
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
    }


def test_a_revision_the_candidate_no_longer_accepts_is_still_breaking(tmp_path: Path) -> None:
    candidate = _copy(tmp_path, "time", "2026.1.26")
    server_json = candidate / "legacy" / "server.json"
    record = json.loads(server_json.read_text())
    record["supportedVersions"] = [v for v in record["supportedVersions"] if v != "2024-11-05"]
    server_json.write_text(json.dumps(record))
    report = diff_snapshots(REAL / "time" / "2025.9.25", candidate)
    assert ("protocol_version_removed", "2024-11-05") in _breaking(report)


def test_a_one_handshake_record_is_not_compared_and_the_report_says_so(tmp_path: Path) -> None:
    baseline = _copy(tmp_path, "time", "2025.9.25")
    server_json = baseline / "legacy" / "server.json"
    record = json.loads(server_json.read_text())
    record.update(supportedVersions=["2025-06-18"], supportedVersionsSource="initialize")
    server_json.write_text(json.dumps(record))
    report = diff_snapshots(baseline, REAL / "time" / "2026.1.26")
    assert not _breaking(report)
    assert any("come from one initialize" in note for note in report["notes"])


# -- 2. equivalent integer bounds -----------------------------------------------------------------


def test_exclusive_and_inclusive_integer_bounds_are_the_same_bounds() -> None:
    report = _diff("fetch", "2026.6.4", "2026.10.24")
    max_length = [c for c in report["changes"] if (c["path"] or "").startswith("inputSchema.properties.max_length")]
    assert [c["rule"] for c in max_length] == ["bound_rewritten"]
    assert not max_length[0]["breaksClients"] and not max_length[0]["affectsModels"]


def test_draft04_boolean_exclusive_form_is_the_2020_form() -> None:
    draft04 = {"type": "integer", "maximum": 10, "exclusiveMaximum": True}
    assert effective_bounds(draft04) == effective_bounds({"type": "integer", "maximum": 9})
    assert effective_bounds({"type": "number", "maximum": 10, "exclusiveMaximum": True}) == {"exclusiveMaximum": 10}
    facts = diff_schemas({"type": "integer", "exclusiveMinimum": 0}, {"type": "integer", "minimum": 1})
    assert [f.direction for f in facts] == ["equivalent"]


def test_a_really_lower_integer_bound_is_still_narrowed() -> None:
    facts = diff_schemas({"type": "integer", "exclusiveMaximum": 100}, {"type": "integer", "maximum": 50})
    assert [(f.keyword, f.direction) for f in facts] == [("maximum", "narrowed")]


# -- 3. bounds that exclude nothing representable --------------------------------------------------


def test_max_safe_integer_bounds_are_not_a_narrowing(tmp_path: Path) -> None:
    candidate = _copy(tmp_path, "fetch", "2026.10.24")
    tools_json = candidate / "legacy" / "tools.json"
    tools = json.loads(tools_json.read_text())
    # What zod 4 emits for z.number().int(): the safe-integer limit as an explicit bound.
    start_index = tools[0]["inputSchema"]["properties"]["start_index"]
    start_index["maximum"] = MAX_SAFE_INTEGER
    tools_json.write_text(json.dumps(tools))
    report = diff_snapshots(REAL / "fetch" / "2026.6.4", candidate)
    start = [c for c in report["changes"] if "start_index" in (c["path"] or "")]
    assert start and {c["rule"] for c in start} == {"bound_rewritten"}
    assert _breaking(report) == TRUE_BREAKING[("fetch", "2026.6.4", "2026.10.24")]


def test_a_min_safe_integer_lower_bound_is_no_bound() -> None:
    assert effective_bounds({"type": "integer", "minimum": -MAX_SAFE_INTEGER}) == {}
    assert diff_schemas({"type": "integer"}, {"type": "integer", "minimum": -(2**60)})[0].direction == "equivalent"


def test_a_bound_below_the_safe_range_still_counts() -> None:
    facts = diff_schemas({"type": "integer"}, {"type": "integer", "maximum": MAX_SAFE_INTEGER - 1})
    assert [(f.keyword, f.direction) for f in facts] == [("maximum", "narrowed")]


# -- 4. empty capability objects -------------------------------------------------------------------


def test_an_empty_experimental_capability_dropped_is_no_change() -> None:
    before = json.loads((REAL / "time" / "2026.1.26" / "legacy" / "server.json").read_text())
    assert before["capabilities"].get("experimental") == {}
    report = _diff("time", "2026.1.26", "2026.10.19")
    assert not [c for c in report["changes"] if c["name"] == "experimental"]


def test_a_member_of_experimental_dropped_still_counts(tmp_path: Path) -> None:
    baseline = _copy(tmp_path, "time", "2026.1.26")
    server_json = baseline / "legacy" / "server.json"
    record = json.loads(server_json.read_text())
    record["capabilities"]["experimental"] = {"io.example/streaming": {}}
    server_json.write_text(json.dumps(record))
    report = diff_snapshots(baseline, REAL / "time" / "2026.10.19")
    # Non-standard by definition (issue 36): dangerous, not breaking, and still named.
    dangerous = {(c["rule"], c["name"]) for c in report["changes"] if c["grade"] == "dangerous"}
    assert ("experimental_capability_removed", "experimental.io.example/streaming") in dangerous


# -- client-capability profile ---------------------------------------------------------------------


def test_snapshots_record_their_client_profile() -> None:
    record = json.loads((REAL / "everything" / "2025.11.25" / "legacy" / "server.json").read_text())
    assert record["clientProfile"] == {"name": "typical", "capabilities": ["roots", "sampling", "elicitation"]}
    tools = {t["name"] for t in json.loads((REAL / "everything" / "2025.11.25" / "legacy" / "tools.json").read_text())}
    assert "listRoots" in tools  # offered only to a client that declares roots


def test_different_client_profiles_are_said_in_the_report(tmp_path: Path) -> None:
    candidate = _copy(tmp_path, "everything", "2025.11.25")
    server_json = candidate / "legacy" / "server.json"
    record = copy.deepcopy(json.loads(server_json.read_text()))
    record["clientProfile"] = {"name": "none", "capabilities": []}
    server_json.write_text(json.dumps(record))
    report = diff_snapshots(REAL / "everything" / "2025.11.25", candidate)
    assert any("different client capabilities" in note and "none (none)" in note for note in report["notes"])


def _copy(tmp_path: Path, server: str, version: str) -> Path:
    target = tmp_path / f"{server}-{version}"
    shutil.copytree(REAL / server / version, target)
    return target


# -- 5. what the spec defines is the contract (issue 36) ------------------------------------------


def test_a_client_capability_a_server_stopped_declaring_is_information() -> None:
    declared = json.loads((REAL / "everything" / "2025.7.29" / "legacy" / "server.json").read_text())
    assert declared["capabilities"]["elicitation"] == {} and declared["capabilitiesSource"] == "raw-initialize"
    report = _diff("everything", "2025.7.29", "2025.11.25")
    about = [c for c in report["changes"] if c["name"] == "elicitation"]
    assert [(c["rule"], c["grade"], c["path"]) for c in about] == [
        ("non_spec_capability_changed", "info", "capabilities.elicitation")
    ]
    assert "elicitation is a client capability" in about[0]["hint"]
    # The real change beside it is still found: a bare client no longer gets startElicitation.
    assert _breaking(report) == {("tool_requires_capability", "startElicitation")}


def test_a_published_zod_3_to_4_rewrite_of_enums_is_no_narrowing() -> None:
    # Issue 36's search server: a patch release whose zod 4 spells each union of literals as anyOf of const.
    old = json.loads((REAL / "brave-search" / "2.0.63" / "legacy" / "tools.json").read_text())
    new = json.loads((REAL / "brave-search" / "2.0.80" / "legacy" / "tools.json").read_text())
    web_old, web_new = (next(t for t in tools if t["name"] == "brave_web_search") for tools in (old, new))
    assert web_old["inputSchema"]["properties"]["units"]["enum"] == ["metric", "imperial"]
    assert [m["const"] for m in web_new["inputSchema"]["properties"]["units"]["anyOf"]] == ["metric", "imperial"]
    report = _diff("brave-search", "2.0.63", "2.0.80")
    assert not _breaking(report)
    assert not [c for c in report["changes"] if ".units" in (c["path"] or "") or ".safesearch" in (c["path"] or "")]


def test_a_value_dropped_inside_the_published_rewrite_is_still_found(tmp_path: Path) -> None:
    candidate = _copy(tmp_path, "brave-search", "2.0.80")
    for tools_json in candidate.rglob("legacy/tools.json"):
        tools = json.loads(tools_json.read_text())
        web = next(t for t in tools if t["name"] == "brave_web_search")
        units = web["inputSchema"]["properties"]["units"]
        units["anyOf"] = [m for m in units["anyOf"] if m["const"] != "imperial"]
        tools_json.write_text(json.dumps(tools))
    report = diff_snapshots(REAL / "brave-search" / "2.0.63", candidate)
    assert _breaking(report) == {("type_narrowed", "brave_web_search")}
