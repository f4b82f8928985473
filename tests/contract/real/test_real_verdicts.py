"""Published servers with rich schemas, recorded under both client profiles, each pair held to the verdicts
written by hand in its folder's verdicts.yaml; and each class of issue 22 pinned on a real contract."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from watcher.contract.diff import diff_snapshots
from watcher.contract.report import render

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
VERDICT_FILES = sorted(REAL.glob("*/verdicts.yaml"))
PAIRS = [(path.parent.name, pair) for path in VERDICT_FILES for pair in yaml.safe_load(path.read_text())["pairs"]]
Item = tuple[str, str, str | None]


def _items(report: dict[str, Any], keep: str) -> set[Item]:
    return {
        (c["rule"], c["name"], c["path"])
        for c in report["changes"]
        if (c["breaksClients"] if keep == "breaking" else c["grade"] == keep)
    }


def _listed(pair: dict[str, Any], key: str) -> set[Item]:
    return {(rule, name, path) for rule, name, path in pair[key] or []}


def test_at_least_four_servers_with_rich_schemas_are_recorded() -> None:
    assert len(VERDICT_FILES) >= 4
    for path in VERDICT_FILES:
        versions = [p for p in path.parent.iterdir() if p.is_dir()]
        assert len(versions) >= 2, path.parent.name
        for version in versions:
            assert (version / "profiles" / "none").is_dir(), version


@pytest.mark.parametrize(("server", "pair"), PAIRS, ids=[f"{s}-{p['baseline']}-{p['candidate']}" for s, p in PAIRS])
def test_each_pair_reports_exactly_the_hand_checked_verdicts(server: str, pair: dict[str, Any]) -> None:
    report = diff_snapshots(REAL / server / pair["baseline"], REAL / server / pair["candidate"])
    assert _items(report, "breaking") == _listed(pair, "breaking")
    assert _items(report, "dangerous") == _listed(pair, "dangerous")
    assert not _items(report, "breaking") & _listed(pair, "false_before")


def test_no_registry_host_in_the_recorded_text() -> None:
    for path in REAL.rglob("*.json"):
        text = path.read_text(encoding="utf-8")
        for host in ("registry." + "npmjs", "pypi" + ".org", "python" + "hosted", "deb." + "debian"):
            assert host not in text, path


# -- 1. a tool gone for a bare client ----------------------------------------------------------------


def test_a_tool_gone_for_a_bare_client_is_reported_under_its_profile() -> None:
    report = diff_snapshots(REAL / "everything" / "2025.11.25", REAL / "everything" / "2026.1.26")
    lists = ("tool_removed", "tool_renamed")
    sample = [(c["rule"], c["profile"]) for c in report["changes"] if c["name"] == "sampleLLM" and c["rule"] in lists]
    # Renamed for a client that declares sampling; gone, with no successor, for one that does not.
    assert sorted(sample) == [("tool_removed", "none"), ("tool_renamed", "typical")]
    assert "| legacy | none | tools | `sampleLLM` |" in render(report, "markdown")


def test_a_real_tool_gated_behind_a_capability_is_tool_requires_capability(tmp_path: Path) -> None:
    candidate = tmp_path / "everything"
    shutil.copytree(REAL / "everything" / "2026.1.26", candidate)
    bare = candidate / "profiles" / "none" / "legacy" / "tools.json"
    tools = [t for t in json.loads(bare.read_text()) if t["name"] != "get-sum"]
    bare.write_text(json.dumps(tools))
    report = diff_snapshots(REAL / "everything" / "2026.1.26", candidate)
    assert [(c["rule"], c["name"], c["profile"]) for c in report["changes"]] == [
        ("tool_requires_capability", "get-sum", "none")
    ]


# -- 2. renames need evidence ------------------------------------------------------------------------


def test_a_new_tool_of_another_purpose_is_no_rename_and_carries_no_parameter_finding() -> None:
    report = diff_snapshots(REAL / "notion" / "1.9.1", REAL / "notion" / "2.5.2")
    assert ("tool_removed", "API-create-a-database", None) in _items(report, "breaking")
    about_new = {c["rule"] for c in report["changes"] if c["name"] == "API-create-a-data-source"}
    assert about_new == {"tool_added"}


# -- 3. and 4. open objects and combinators ----------------------------------------------------------


def test_an_object_that_became_a_union_with_an_open_branch_breaks_no_call() -> None:
    report = diff_snapshots(REAL / "notion" / "1.9.1", REAL / "notion" / "2.5.2")
    children = [c for c in report["changes"] if c["name"] == "API-patch-block-children"]
    assert not [c for c in children if c["breaksClients"]]
    assert {c["rule"] for c in children if c["grade"] == "dangerous"} == {"parameter_ignored"}


def test_a_parameter_dropped_from_a_closed_real_object_still_breaks() -> None:
    report = diff_snapshots(REAL / "playwright" / "0.0.40", REAL / "playwright" / "0.0.83")
    assert ("parameter_removed", "browser_click", "inputSchema.properties.ref") in _items(report, "breaking")


# -- 5. patterns -------------------------------------------------------------------------------------


def test_a_widened_real_pattern_is_widened_and_an_undecidable_one_is_graded_apart(tmp_path: Path) -> None:
    baseline = tmp_path / "base"
    shutil.copytree(REAL / "firecrawl" / "3.26.0", baseline)
    candidate = tmp_path / "cand"
    shutil.copytree(REAL / "firecrawl" / "3.26.0", candidate)
    tools_json = "legacy/tools.json"
    text = (candidate / tools_json).read_text()
    # The slug pattern of the real schema, widened to allow dots; the URL pattern given a lookahead.
    assert text.count('"^[a-z0-9][a-z0-9_-]*$"') == 2 and text.count('"^https?:\\\\/\\\\/"') == 1
    text = text.replace('"^[a-z0-9][a-z0-9_-]*$"', '"^[a-z0-9][a-z0-9_.-]*$"')
    text = text.replace('"^https?:\\\\/\\\\/"', '"^(?=h)https?:\\\\/\\\\/"')
    (candidate / tools_json).write_text(text)
    (candidate / "profiles" / "none" / tools_json).write_text(text)
    report = diff_snapshots(baseline, candidate)
    by_rule = {(c["rule"], c["grade"]) for c in report["changes"] if (c["path"] or "").endswith("pattern")}
    assert by_rule == {("type_widened", "models"), ("pattern_changed_unknown", "dangerous")}
    assert not _items(report, "breaking")


# -- 6. capabilities kept whole ----------------------------------------------------------------------


def test_deep_real_capabilities_are_recorded_whole_and_a_nested_removal_is_exact(tmp_path: Path) -> None:
    record = json.loads((REAL / "everything" / "2026.1.26" / "legacy" / "server.json").read_text())
    assert record["capabilitiesSource"] == "raw-initialize"
    assert record["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
    candidate = tmp_path / "everything"
    shutil.copytree(REAL / "everything" / "2026.1.26", candidate)
    for server_json in candidate.rglob("legacy/server.json"):
        changed = json.loads(server_json.read_text())
        del changed["capabilities"]["tasks"]["requests"]["tools"]
        server_json.write_text(json.dumps(changed))
    report = diff_snapshots(REAL / "everything" / "2026.1.26", candidate)
    # `requests` is left empty, and an empty capability object declares nothing: the removal is named there,
    # below `tasks`, which the server still declares.
    assert {(c["rule"], c["path"]) for c in report["changes"] if c["breaksClients"]} == {
        ("capability_removed", "capabilities.tasks.requests")
    }
