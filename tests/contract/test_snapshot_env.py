"""`snapshot` of a stdio server that needs its own configuration: --env, --env-from and env profiles.

The server is real (tests/contract/fixtures/scoped_server.py, mcp 2.x over stdio); every test checks that the
values reached it (it will not start otherwise) and appear nowhere the watcher wrote or printed.
"""

from __future__ import annotations

import json
import logging
import secrets
import sys
from pathlib import Path

import pytest

from tests.contract.helpers import ROOT, run_cli
from watcher.contract.diff import diff_snapshots

SERVER = [sys.executable, str(ROOT / "tests" / "contract" / "fixtures" / "scoped_server.py")]


def token() -> str:
    return f"tok-{secrets.token_hex(12)}"


def snapshot(out: Path, *options: str) -> int:
    return run_cli(["snapshot", "--out", str(out), "--timeout", "30", *options, "--", *SERVER])


def tools(folder: Path, era: str = "modern") -> list[str]:
    return [tool["name"] for tool in json.loads((folder / era / "tools.json").read_text())]


def assert_nowhere(value: str, folder: Path, captured: str) -> None:
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert files, "the snapshot wrote nothing"
    for path in files:
        assert value not in path.read_text(errors="replace"), path
    assert value not in captured


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


def test_without_its_variable_the_server_exits_and_both_eras_fail(tmp_path: Path, capsys: pytest.CaptureFixture):
    assert snapshot(tmp_path / "none") == 1
    out = capsys.readouterr().out
    # The server's own words, once per era and client profile (typical and none).
    assert out.count("Please set SCOPED_API_TOKEN") == 4
    assert out.count("(client profile none): error:") == 2


def test_env_gives_the_value_to_the_server_only(tmp_path: Path, capsys: pytest.CaptureFixture, logs):
    value = token()
    assert snapshot(tmp_path / "snap", "--env", f"SCOPED_API_TOKEN={value}") == 0
    captured = capsys.readouterr()
    assert tools(tmp_path / "snap") == tools(tmp_path / "snap", "legacy") == ["search_books"]
    manifest = json.loads((tmp_path / "snap" / "snapshot.json").read_text())
    assert manifest["envNames"] == ["SCOPED_API_TOKEN"] and manifest["profile"] is None
    assert_nowhere(value, tmp_path / "snap", captured.out + captured.err + logs.text)


def test_env_from_passes_the_watchers_variable_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture, logs, monkeypatch: pytest.MonkeyPatch
):
    value = token()
    monkeypatch.setenv("SCOPED_API_TOKEN", value)
    monkeypatch.setenv("SCOPED_SCOPE", "catalog:admin")  # not named: must not reach the server
    assert snapshot(tmp_path / "snap", "--env-from", "SCOPED_API_TOKEN") == 0
    captured = capsys.readouterr()
    assert tools(tmp_path / "snap") == ["search_books"]
    manifest = json.loads((tmp_path / "snap" / "snapshot.json").read_text())
    assert manifest["envNames"] == ["SCOPED_API_TOKEN"]
    assert_nowhere(value, tmp_path / "snap", captured.out + captured.err + logs.text)


def test_an_env_profile_changes_the_tool_list_and_is_recorded_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture, logs, monkeypatch: pytest.MonkeyPatch
):
    reader_token, admin_token = token(), token()
    monkeypatch.setenv("MCP_WATCHER_PROFILE_READER", f"env SCOPED_API_TOKEN={reader_token}\n")
    monkeypatch.setenv("SCOPED_API_TOKEN", admin_token)
    # One line taken from the watcher's environment by name, one with its value.
    monkeypatch.setenv("MCP_WATCHER_PROFILE_CATALOG_ADMIN", "env SCOPED_API_TOKEN\n\nenv SCOPED_SCOPE=catalog:admin\n")
    reader, admin = tmp_path / "reader", tmp_path / "admin"
    assert snapshot(reader, "--profile", "reader") == 0
    assert snapshot(admin, "--profile", "catalog-admin") == 0
    captured = capsys.readouterr()
    assert tools(reader) == ["search_books"]
    assert tools(admin) == tools(admin, "legacy") == ["delete_book", "search_books"]
    manifest = json.loads((admin / "snapshot.json").read_text())
    assert manifest["profile"] == "catalog-admin"
    assert manifest["envNames"] == ["SCOPED_API_TOKEN", "SCOPED_SCOPE"] and manifest["headerNames"] == []
    widened = diff_snapshots(reader, admin)
    assert {(c["name"], c["kind"], c["era"]) for c in widened["changes"]} == {("delete_book", "added", "both")}
    for value, folder in ((reader_token, reader), (admin_token, admin)):
        assert_nowhere(value, folder, captured.out + captured.err + logs.text)


def test_a_server_that_echoes_its_token_gets_it_masked(tmp_path: Path, capsys: pytest.CaptureFixture, logs):
    value = f"revoked-{secrets.token_hex(12)}"
    assert snapshot(tmp_path / "snap", "--env", f"SCOPED_API_TOKEN={value}") == 1
    captured = capsys.readouterr()
    assert "token [secret] was revoked" in captured.out
    server = json.loads((tmp_path / "snap" / "modern" / "server.json").read_text())
    assert "token [secret] was revoked" in server["status"]
    assert_nowhere(value, tmp_path / "snap", captured.out + captured.err + logs.text)


def test_env_from_an_unset_variable_is_a_usage_error_before_any_server_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("SCOPED_UNSET_TOKEN", raising=False)
    marker = tmp_path / "started"
    starter = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    argv = ["snapshot", "--out", str(tmp_path / "snap"), "--env-from", "SCOPED_UNSET_TOKEN", "--", *starter]
    assert run_cli(argv) == 2
    err = capsys.readouterr().err
    assert "--env-from SCOPED_UNSET_TOKEN: SCOPED_UNSET_TOKEN is not set" in err
    assert not marker.exists() and not (tmp_path / "snap").exists()


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--env", "hunter2-no-equals-sign"], "--env #1: expected NAME=VALUE"),
        (["--env", "1BAD=hunter2-value"], "--env #1: expected NAME=VALUE"),
        (["--env-from", "hunter2 value"], "--env-from: expected a variable name"),
        (["--env", "A_TOKEN=hunter2-value", "--env-from", "A_TOKEN"], "A_TOKEN: given by both --env and --env-from"),
        (["--header", "Authorization: hunter2-value"], "--header applies to --url"),
        (["--profile", "web"], "profile 'web' (MCP_WATCHER_PROFILE_WEB) has HTTP headers"),
        (["--profile", "broken"], "MCP_WATCHER_PROFILE_BROKEN line 2: expected NAME=VALUE"),
        (["--profile", "missing"], "profile 'missing': set MCP_WATCHER_PROFILE_MISSING"),
    ],
)
def test_usage_errors_name_the_option_or_variable_never_the_value(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, options: list[str], expected: str
):
    monkeypatch.setenv("A_TOKEN", "hunter2-from-env")
    monkeypatch.setenv("MCP_WATCHER_PROFILE_WEB", "Authorization: Bearer hunter2-web\n")
    monkeypatch.setenv("MCP_WATCHER_PROFILE_BROKEN", "env OK_NAME=fine\nenv =hunter2-orphan\n")
    monkeypatch.delenv("MCP_WATCHER_PROFILE_MISSING", raising=False)
    assert snapshot(tmp_path / "snap", *options) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert "hunter2" not in err
    assert not (tmp_path / "snap").exists()


def test_env_is_for_stdio_servers_only(tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch):
    monkeypatch.setenv("MCP_WATCHER_PROFILE_STDIO", "env SCOPED_API_TOKEN=hunter2-stdio\n")
    url = "http://127.0.0.1:9/mcp"  # never contacted: the usage error comes first
    assert run_cli(["snapshot", "--url", url, "--out", str(tmp_path), "--env", "X=hunter2-x"]) == 2
    assert run_cli(["snapshot", "--url", url, "--out", str(tmp_path), "--profile", "stdio"]) == 2
    err = capsys.readouterr().err
    assert "--env and --env-from apply to stdio servers" in err and "has 'env' lines" in err
    assert "hunter2" not in err
