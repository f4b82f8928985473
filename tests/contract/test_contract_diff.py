"""Loading snapshot folders, era layouts, the CLI's exit codes and its unusable-input errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.contract.helpers import obj, run_cli, server_record, tool, write_snapshot
from watcher.contract.diff import SnapshotError, diff_snapshots
from watcher.contract.report import worst_level

FIND = tool("find_book", obj({"title": {"type": "string"}}, ["title"]))
FIND_WITH_AUTHOR = tool(
    "find_book", obj({"title": {"type": "string"}, "author": {"type": "string"}}, ["title", "author"])
)


def both_era(directory: Path, tools: list[dict], modern_tools: list[dict] | None = None) -> Path:
    write_snapshot(directory / "legacy", tools=tools, server=server_record("legacy"))
    write_snapshot(
        directory / "modern", tools=modern_tools if modern_tools is not None else tools, server=server_record("modern")
    )
    return directory


def test_change_found_in_both_eras_is_reported_once(tmp_path: Path) -> None:
    report = diff_snapshots(both_era(tmp_path / "a", [FIND]), both_era(tmp_path / "b", [FIND_WITH_AUTHOR]))
    assert [(c["kind"], c["era"]) for c in report["changes"]] == [("required_parameter_added", "both")]
    assert report["eras"] == ["legacy", "modern"]


def test_change_in_one_era_is_tagged_with_it(tmp_path: Path) -> None:
    report = diff_snapshots(
        both_era(tmp_path / "a", [FIND]), both_era(tmp_path / "b", [FIND], modern_tools=[FIND, tool("extra")])
    )
    assert [(c["name"], c["kind"], c["era"]) for c in report["changes"]] == [("extra", "added", "modern")]


def test_same_contract_in_the_other_era_has_no_changes(tmp_path: Path) -> None:
    legacy = write_snapshot(
        tmp_path / "l", tools=[FIND], server=server_record("legacy", capabilities={"tools": {"listChanged": False}})
    )
    modern = write_snapshot(tmp_path / "m", tools=[FIND], server=server_record("modern"))
    report = diff_snapshots(legacy, modern)
    assert report["changes"] == []
    assert any("era-specific" in note for note in report["notes"])


def test_single_era_against_both_layout_uses_the_matching_era(tmp_path: Path) -> None:
    both = both_era(tmp_path / "both", [FIND])
    single = write_snapshot(tmp_path / "single", tools=[FIND_WITH_AUTHOR], server=server_record("legacy"))
    report = diff_snapshots(both, single)
    assert [(c["kind"], c.get("era")) for c in report["changes"]] == [("required_parameter_added", "legacy")]


def test_lists_only_snapshot_from_another_tool_is_accepted(tmp_path: Path) -> None:
    # The seeds' shell script writes only the four list files.
    for name, tools in (("a", [FIND]), ("b", [])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "tools.json").write_text(json.dumps(tools))
    report = diff_snapshots(tmp_path / "a", tmp_path / "b", "1.4.0", "1.5.0")
    assert report["baseline"] == "1.4.0" and report["candidate"] == "1.5.0"
    assert [(c["list"], c["name"], c["kind"]) for c in report["changes"]] == [("tools", "find_book", "removed")]


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda d: shutil.rmtree(d), "no such snapshot directory"),
        (lambda d: (d / "tools.json").write_text('[\n  {"name": "a",\n  oops]\n'), "tools.json: line 3 column 3"),
        (lambda d: (d / "tools.json").unlink(), "tools.json: missing"),
        (lambda d: (d / "tools.json").write_text('{"tools": []}'), "expected a JSON array"),
        (
            lambda d: (d / "tools.json").write_text('[{"description": "x"}]'),
            "entry 0: expected an object with a string",
        ),
        (lambda d: (d / "tools.json").write_text('[{"name": "a"}, {"name": "a"}]'), "entry 1: duplicate name 'a'"),
        (
            lambda d: (d / "server.json").write_text(json.dumps(server_record(status="error: timed out after 60 s"))),
            "this era's snapshot failed",
        ),
        (lambda d: [p.unlink() for p in d.iterdir()], "not a snapshot directory"),
    ],
)
def test_unusable_input_names_the_path(tmp_path: Path, damage, expected: str) -> None:
    good = write_snapshot(tmp_path / "good", tools=[FIND])
    bad = write_snapshot(tmp_path / "bad", tools=[FIND])
    damage(bad)
    with pytest.raises(SnapshotError) as error:
        diff_snapshots(good, bad)
    assert expected in str(error.value)
    assert str(bad) in str(error.value)


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write_snapshot(tmp_path / "base", tools=[FIND])
    same = write_snapshot(tmp_path / "same", tools=[FIND])
    breaking = write_snapshot(tmp_path / "breaking", tools=[FIND_WITH_AUTHOR])
    reworded = write_snapshot(tmp_path / "reworded", tools=[{**FIND, "description": "Find a book by its title."}])
    assert run_cli(["diff", str(base), str(same)]) == 0
    assert run_cli(["diff", str(base), str(breaking)]) == 1
    assert run_cli(["diff", str(base), str(breaking), "--fail-on", "none"]) == 0
    assert run_cli(["diff", str(base), str(reworded)]) == 0
    assert run_cli(["diff", str(base), str(reworded), "--fail-on", "models"]) == 1
    assert run_cli(["diff", str(base), str(breaking), "--fail-on", "models"]) == 1
    capsys.readouterr()
    assert run_cli(["diff", str(base), str(tmp_path / "missing")]) == 2
    assert str(tmp_path / "missing") in capsys.readouterr().err


def test_cli_prints_the_report_in_the_seed_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write_snapshot(tmp_path / "base", tools=[FIND])
    cand = write_snapshot(tmp_path / "cand", tools=[FIND_WITH_AUTHOR])
    capsys.readouterr()
    run_cli(["diff", str(base), str(cand), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert worst_level(report) == "clients"
    change = report["changes"][0]
    assert {
        k: change[k] for k in ("list", "name", "path", "kind", "before", "after", "breaksClients", "affectsModels")
    } == {
        "list": "tools",
        "name": "find_book",
        "path": "inputSchema.required",
        "kind": "required_parameter_added",
        "before": ["title"],
        "after": ["title", "author"],
        "breaksClients": True,
        "affectsModels": True,
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--out", "X"], "give exactly one target"),
        (["--out", "X", "--url", "http://127.0.0.1:9/mcp", "--", "python", "server.py"], "give exactly one target"),
        (["--out", "X", "--url", "http://127.0.0.1:9/mcp", "--header", "Authorization Bearer s3cret"], "--header #1"),
        (["--out", "X", "--url", "http://127.0.0.1:9/mcp", "--profile", "ops"], "MCP_WATCHER_PROFILE_OPS"),
        (["--out", "X", "--header", "Authorization: Bearer s3cret", "--", "python", "server.py"], "--url"),
    ],
)
def test_snapshot_usage_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCP_WATCHER_PROFILE_OPS", raising=False)
    argv = [str(tmp_path / "snap") if a == "X" else a for a in argv]
    assert run_cli(["snapshot", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "s3cret" not in err
    assert not (tmp_path / "snap").exists()


def test_snapshot_of_an_unreachable_server_writes_the_failure_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "snap"
    assert run_cli(["snapshot", "--url", "http://127.0.0.1:9/mcp", "--out", str(out), "--timeout", "10"]) == 1
    assert "legacy: error:" in capsys.readouterr().out
    server = json.loads((out / "legacy" / "server.json").read_text())
    assert server["era"] == "legacy" and server["status"].startswith("error:")
    assert not (out / "legacy" / "tools.json").exists()
