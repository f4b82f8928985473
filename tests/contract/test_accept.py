"""Accepted drift and severity overrides, on a real recorded pair (fetch 2026.6.4 → 2026.10.24: the one
true breaking change is the unknown-tool error moving from a tool result to a JSON-RPC error)."""

from __future__ import annotations

import datetime as dt
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.contract.helpers import run_cli
from watcher.contract.accept import AcceptError, apply_acceptance, apply_levels, parse_accept_file
from watcher.contract.diff import diff_snapshots
from watcher.contract.report import fails, render

REAL = Path(__file__).resolve().parent / "fixtures" / "real" / "fetch"
BASE, CAND = REAL / "2026.6.4", REAL / "2026.10.24"
TODAY = dt.date(2026, 11, 2)
ENTRY = """\
- rule: error_mode_changed
  list: errors
  name: unknown_tool
  reason: the SDK 2 answers unknown tools with -32602; our client handles both
  expires: {expires}
  by: platform-team
"""


def _report(expires: str = "2027-01-31", extra: str = "") -> dict:
    accept = parse_accept_file(ENTRY.format(expires=expires) + extra, "accept.yaml")
    return apply_acceptance(diff_snapshots(BASE, CAND), accept, TODAY)


def test_an_accepted_change_moves_out_of_changes_and_fails_nothing() -> None:
    plain = diff_snapshots(BASE, CAND)
    assert fails(plain)
    report = _report()
    assert not fails(report)
    (accepted,) = report["accepted"]
    assert accepted["rule"] == "error_mode_changed"
    assert accepted["accepted"] == {
        "reason": "the SDK 2 answers unknown tools with -32602; our client handles both",
        "expires": "2027-01-31",
        "by": "platform-team",
    }
    assert report["summary"]["breaksClients"] == 0 and report["summary"]["accepted"] == 1
    assert report["acceptance"]["stale"] == []


def test_an_expired_acceptance_matches_nothing_and_says_so() -> None:
    report = _report(expires="2026-10-31")
    assert fails(report) and report["accepted"] == []
    assert any(note.startswith("acceptance expired on 2026-10-31: error_mode_changed") for note in report["notes"])


def test_an_entry_that_matched_nothing_is_stale() -> None:
    extra = "- {rule: tool_removed, list: tools, name: gone, reason: old news, expires: 2027-01-31}\n"
    report = _report(extra=extra)
    assert [e["name"] for e in report["acceptance"]["stale"]] == ["gone"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- {rule: no_such_rule, list: tools, name: x, reason: r, expires: 2027-01-01}\n", "accept.yaml:1: 0.rule"),
        ("- rule: tool_removed\n  list: tools\n  name: x\n  expires: 2027-01-01\n", "accept.yaml:1: 0.reason"),
        (
            "- rule: tool_removed\n  list: tools\n  name: x\n  reason: r\n  expires: 2027-13-01\n",
            "accept.yaml:5: 0.expires",
        ),
        ("- rule: tool_removed\n  list: tools\n  name: x\n  reason: r\n", "0.expires: required key is missing"),
    ],
)
def test_bad_entries_name_file_line_and_key(text: str, expected: str) -> None:
    with pytest.raises(AcceptError, match=expected.replace(".", r"\.")):
        parse_accept_file(text, "accept.yaml")


def test_every_format_shows_accepted_changes_apart() -> None:
    report = _report()
    markdown = render(report, "markdown")
    assert "### Accepted (1)" in markdown and "platform-team" in markdown
    junit = ET.fromstring(render(report, "junit"))
    skipped = junit.findall(".//testcase/skipped")
    assert len(skipped) == 1 and "accepted until 2027-01-31" in skipped[0].get("message", "")
    assert junit.find("testsuite").get("skipped") == "1"
    github = render(report, "github")
    assert "MCP contract (accepted)" in github and "::error" not in github


def test_a_severity_override_keeps_the_original_grade() -> None:
    report = apply_levels(diff_snapshots(BASE, CAND), {"error_mode_changed": "info"})
    (change,) = [c for c in report["changes"] if c["rule"] == "error_mode_changed"]
    assert change["grade"] == "info" and change["originalGrade"] == "breaking"
    assert not fails(report)
    ignored = apply_levels(diff_snapshots(BASE, CAND), {"description_changed": "ignore"})
    assert ignored["ignored"] and not [c for c in ignored["changes"] if c["rule"] == "description_changed"]


def _accept_args(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """`accept` of the diff report of BASE → CAND (written by the real `diff`), selecting one change."""
    report_path = tmp_path / "report.json"
    assert run_cli(["diff", str(BASE), str(CAND)]) == 1
    report_path.write_text(capsys.readouterr().out)
    return ["accept", str(report_path), "--select", "error_mode_changed", "--reason", "known"]


def test_diff_and_accept_commands_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    accept_path = tmp_path / "accept.yaml"
    args = [*_accept_args(tmp_path, capsys), "--expires", "2099-01-01"]
    assert run_cli([*args, "--file", str(accept_path)]) == 0
    assert parse_accept_file(accept_path.read_text(), "a").entries[0].rule == "error_mode_changed"
    capsys.readouterr()
    assert run_cli(["diff", str(BASE), str(CAND), "--accept", str(accept_path)]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["accepted"] == 1
    assert run_cli(["diff", str(BASE), str(CAND), "--level", "error_mode_changed=models"]) == 0


def test_a_suite_run_applies_the_team_levels_and_the_server_accept_file(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from watcher.config import LoadedConfig, parse_config
    from watcher.suites.notices import render as render_result
    from watcher.suites.runner import _Run

    (tmp_path / "accept.yaml").write_text(ENTRY.format(expires="2099-01-31"))
    config = parse_config(
        """
teams:
  - name: books
    slack_channel: "#books"
    contract: {levels: {description_changed: ignore}}
sdks:
  - {name: python, registry: pypi, package: mcp}
servers:
  - name: fetch
    team: books
    sdk: python
    language: python
    path: .
    start: [python, -m, fetch]
    baseline_sdk_version: "1.26.0"
    accept: accept.yaml
""",
        "watcher.yaml",
    )
    loaded = LoadedConfig(config=config, path=tmp_path / "watcher.yaml", base_dir=tmp_path)
    run = SimpleNamespace(  # a path server: its files are the operator's (no root)
        loaded=loaded, server=config.servers[0], repo_path=loaded.resolve, repo_root_of=lambda _path: None
    )
    steered = _Run.steer_contract(run, diff_snapshots(BASE, CAND))  # type: ignore[arg-type]
    assert [c["rule"] for c in steered["accepted"]] == ["error_mode_changed"]
    assert not [c for c in steered["changes"] if c["breaksClients"]]
    assert {c["rule"] for c in steered["ignored"]} == {"description_changed"}
    text, _blocks = render_result(
        {"server": "fetch", "sdk_version": "2.0.0", "verdict": "pass", "contract": steered, "conformance": []}
    )
    assert "Contract: 1 accepted" in text and "until 2099-01-31" in text
    with pytest.raises(Exception, match="unknown contract rule"):
        parse_config("teams:\n  - {name: t, slack_channel: '#t', contract: {levels: {nope: info}}}\n", "w.yaml")


def test_accept_refuses_an_expiry_already_past(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 37: `accept --expires` in the past wrote an entry that accepts nothing, without a word."""
    from tests.digest.helpers import clock_at

    accept_path = tmp_path / "accept.yaml"
    args = [*_accept_args(tmp_path, capsys), "--file", str(accept_path)]
    with clock_at(dt.datetime(2026, 12, 3, 12, tzinfo=dt.UTC)):
        assert run_cli([*args, "--expires", "2026-12-02"]) == 2
        said = capsys.readouterr().err
        assert "--expires 2026-12-02 is in the past (today is 2026-12-03)" in said
        assert not accept_path.exists(), "nothing is written"
        assert run_cli([*args, "--expires", "2026-12-03"]) == 0, "today is the last day an entry counts"
    assert parse_accept_file(accept_path.read_text(), "a").entries[0].expires == dt.date(2026, 12, 3)
