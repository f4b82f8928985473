"""End to end: real SDK versions installed from the package index, real servers, the real conformance
suite and the real snapshot diff. Environments are shared by every test of this module (one install
per server x version), and the module runs on one worker so that they are."""

from __future__ import annotations

import argparse
import json
import secrets
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.suites.helpers import (
    LIBRARY,
    fixture_server,
    library_server,
    library_ts_server,
    process_running,
    write_config,
)
from watcher.boundary import sandbox, toolchain
from watcher.contract.diff import diff_snapshots
from watcher.core.store import Store
from watcher.suites import commands
from watcher.suites.build.env import prepare_env
from watcher.suites.judge.conformance import load_baseline
from watcher.suites.runner import read_report, run_check
from watcher.suites.worker import process_queue, queue_for_release

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("suite-e2e"), pytest.mark.timeout(240)]

# The fixture servers that write what they saw into the test's folder run unsandboxed: the sandbox
# hides that folder (tests/reliability/test_secrets_out_of_reach.py covers the sandboxed case).
NO_SANDBOX = "off"

REPORT_KEYS = {
    "server",
    "sdk_version",
    "baseline_sdk_version",
    "verdict",
    "install",
    "start",
    "conformance",
    "contract",
    "deprecation_warnings",
    "seconds",
}


@pytest.fixture(scope="module")
def envs(sdk_envs: Path) -> Path:
    return sdk_envs  # the session's: other modules build the same library environments


def expected_verdict(report: dict) -> str:
    """The verdict the report's own parts call for (the rules, applied independently of the runner)."""
    if any(c.get("error") for c in report["conformance"]) or (report["contract"] or {}).get("error"):
        return "error" if not any(r["verdict"] == "fail" for r in report["reasons"]) else "fail"
    regressions = any(c["unexpected_failures"] or c["stale_entries"] for c in report["conformance"])
    breaking = any(c["breaksClients"] for c in report["contract"]["changes"])
    return "fail" if regressions or breaking else "pass"


def assert_conformance_sets(report: dict, revisions: list[str], baseline_file: Path) -> None:
    entries = set(load_baseline(baseline_file).entries)
    assert [c["requirements"] for c in report["conformance"]] == revisions
    for result in report["conformance"]:
        assert "error" not in result, result.get("error")
        assert result["passed"] + result["failed"] == result["scenarios"] > 0
        # The suite's own exit code, run with the same file, agrees with the verdict read from checks.json.
        assert result["agrees_with_cli"] is True
        assert set(result["expected_failures"]) <= entries
        assert not set(result["unexpected_failures"]) & entries
        assert set(result["stale_entries"]) <= entries
        run_folder = Path(report["run_dir"]) / "conformance" / result["requirements"] / "results"
        assert len(list(run_folder.glob("*/checks.json"))) >= result["scenarios"]
        for unscored in result["unscored"]:
            assert unscored["reason"] in {"extension", "added-after-release", "pending", "not scored"}


def test_library_on_its_baseline_version_passes_and_replies_in_the_beta_thread(tmp_path: Path, envs: Path):
    loaded = write_config(tmp_path, [library_server()], envs)
    store = Store(tmp_path / "state.db")
    assert queue_for_release(loaded, store, "python", "2.3.0", prerelease=True) == ["library"]
    [outcome] = process_queue(loaded, store)
    report = outcome["report"]
    assert set(report) >= REPORT_KEYS
    assert report["verdict"] == "pass", report["reasons"]
    assert report["install"]["ok"] and report["install"]["installer"] == "uv"
    assert report["start"]["ok"] and report["start"]["url"].endswith("/mcp")
    assert_conformance_sets(report, ["2026-07-28", "2025-11-25"], LIBRARY / "conformance-baseline.yml")
    for result in report["conformance"]:
        assert result["unexpected_failures"] == [] and result["stale_entries"] == []
        assert result["expected_failures"]  # the example fails some checks on purpose: it has no test tools
    assert report["contract"]["changes"] == []
    assert report["contract"]["baseline"] == "2.3.0" and report["contract"]["candidate"] == "2.3.0"
    assert read_report(Path(report["run_dir"])) == json.loads(json.dumps(report, default=str))
    [run] = store.runs(status="done")
    assert run["verdict"] == "pass" and run["report"]["sdk_version"] == "2.3.0"
    [row] = store.outbox()
    assert row["key"] == "run:library:2.3.0:books"
    assert row["thread_of"] == "release:python:2.3.0:books"
    assert row["text"].startswith("PASS: library passes on mcp 2.3.0")


def test_library_on_another_published_version_by_the_check_command(
    tmp_path: Path, envs: Path, capsys: pytest.CaptureFixture[str]
):
    write_config(tmp_path, [library_server()], envs)
    parser = argparse.ArgumentParser()
    parser.add_argument("--config")
    commands.register(parser.add_subparsers())
    args = parser.parse_args(
        ["--config", str(tmp_path / "watcher.yaml"), "check", "--server", "library", "--sdk-version", "2.2.0", "--json"]
    )
    code = args.handler(args)
    report = json.loads(capsys.readouterr().out)
    assert set(report) >= REPORT_KEYS
    assert report["sdk_version"] == "2.2.0" and report["baseline_sdk_version"] == "2.3.0"
    assert report["install"]["ok"] and "2.2.0" in report["install"]["path"]
    assert report["start"]["ok"]
    assert_conformance_sets(report, ["2026-07-28", "2025-11-25"], LIBRARY / "conformance-baseline.yml")
    assert report["verdict"] == expected_verdict(report)
    assert code == {"pass": 0, "fail": 1, "error": 2}[report["verdict"]]
    # The contract diff is the real diff of the stored baseline and this run's snapshot.
    candidate = Path(report["run_dir"]) / "snapshot"
    assert (candidate / "legacy" / "tools.json").exists() and (candidate / "modern" / "server.json").exists()
    again = diff_snapshots(LIBRARY / "baseline-snapshot", candidate, baseline_label="2.3.0", candidate_label="2.2.0")
    assert report["contract"]["changes"] == again["changes"]
    # 2.2.0 and 2.3.0 serve the library's contract alike: with every legacy protocol version probed (not
    # read from one handshake) and empty capability objects ignored, nothing is called breaking.
    assert not [c for c in report["contract"]["changes"] if c["breaksClients"]], report["contract"]["changes"]


def test_server_that_cannot_import_under_an_sdk_version_fails_with_the_evidence(tmp_path: Path, envs: Path):
    loaded = write_config(tmp_path, [library_server()], envs)
    report = run_check(loaded, "library", "1.27.0")
    assert report["verdict"] == "fail"
    assert report["install"]["ok"]
    assert report["start"]["ok"] is False
    assert "exited with code 1 while starting" in report["start"]["error"]
    assert "ImportError" in report["start"]["evidence"] and "MCPServer" in report["start"]["evidence"]
    assert report["conformance"] == [] and report["contract"] is None
    assert "did not start under mcp 1.27.0" in report["reasons"][0]["reason"]


def test_typescript_example_on_a_published_sdk_version(tmp_path: Path, envs: Path):
    loaded = write_config(tmp_path, [library_ts_server()], envs)
    report = run_check(loaded, "library-ts", "1.32.2")
    assert report["install"]["ok"] and report["install"]["installer"] == "npm"
    installed = Path(report["install"]["project_dir"]) / "node_modules" / "@modelcontextprotocol" / "sdk"
    assert json.loads((installed / "package.json").read_text())["version"] == "1.32.2"
    assert report["start"]["ok"]
    assert_conformance_sets(report, ["2025-11-25"], Path(library_ts_server()["expected_failures"]))
    assert report["contract"]["changes"] == []
    assert report["verdict"] == "pass", report["reasons"]


def test_hanging_server_times_out_and_its_whole_group_is_killed(tmp_path: Path, envs: Path):
    pid_file = tmp_path / "pids"
    server = fixture_server(
        "hang",
        "hang_server",
        ["python", "-m", "hang_server"],
        env={"HANG_PID_FILE": str(pid_file)},
        timeouts={"install": 300, "start": 4, "suite": 60, "snapshot": 10},
    )
    loaded = write_config(tmp_path, [server], envs, sandbox=NO_SANDBOX)
    started = time.monotonic()
    report = run_check(loaded, "hang", "2.3.0")
    assert report["verdict"] == "fail"
    assert report["start"]["ok"] is False
    assert "did not answer" in report["start"]["error"] and "within 4 s" in report["start"]["error"]
    assert "sleeping instead of serving" in report["start"]["evidence"]
    assert time.monotonic() - started < 60
    server_pid, grandchild_pid = (int(p) for p in pid_file.read_text().split())
    assert server_pid == report["start"]["pid"]
    deadline = time.monotonic() + 5
    while (process_running(server_pid) or process_running(grandchild_pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_running(server_pid) and not process_running(grandchild_pid)
    assert not list(Path(report["run_dir"]).glob("mcp-watcher-server-*"))


def test_secrets_never_reach_the_server(tmp_path: Path, envs: Path, monkeypatch: pytest.MonkeyPatch):
    token = "xoxb-0000-fake-test-token"
    monkeypatch.setenv("SLACK_BOT_TOKEN", token)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_fake")
    monkeypatch.setenv("PAYMENTS_API_KEY", "k-fake")
    monkeypatch.setenv("UNRELATED_SETTING", "1")
    dump = tmp_path / "env.json"
    server = fixture_server(
        "envdump",
        "envdump_server",
        ["python", "-m", "envdump_server", "--port", "{port}"],
        env={"ENV_DUMP_FILE": str(dump), "LIBRARY_MODE": "test", "EXTRA_SECRET": "s"},
    )
    loaded = write_config(tmp_path, [server], envs, sandbox=NO_SANDBOX)
    report = run_check(loaded, "envdump", "2.3.0")
    assert report["start"]["ok"], report["start"]["evidence"]
    seen = json.loads(dump.read_text())
    for name in ("SLACK_BOT_TOKEN", "GITHUB_TOKEN", "PAYMENTS_API_KEY", "EXTRA_SECRET", "UNRELATED_SETTING"):
        assert name not in seen
    assert token not in json.dumps(seen)
    assert seen["LIBRARY_MODE"] == "test" and seen["PATH"].startswith(report["install"]["bin_dirs"][0])
    assert report["start"]["dropped_env"] == ["EXTRA_SECRET"]
    # Nothing the run wrote holds the token either.
    for path in Path(report["run_dir"]).rglob("*"):
        if path.is_file():
            assert token not in path.read_text(errors="replace")
    # What the SDK printed while the server ran, once per warning.
    [warning] = [w for w in report["deprecation_warnings"] if "logging capability" in w["message"]]
    assert warning["kind"] == "MCPDeprecationWarning" and warning["runtime"] == "python" and warning["count"] == 1
    # No baseline snapshot stored: one is taken the same way under the baseline version (here the same).
    assert report["contract"]["changes"] == []
    assert report["verdict"] == "pass", report["reasons"]


def _granted_secrets_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {
        "slack": "xoxb-0000-fake-slack-token-" + secrets.token_hex(6),
        "api": "tok-" + secrets.token_hex(12),
        "db": "postgres://reader:pw-" + secrets.token_hex(8) + "@127.0.0.1/catalog",
    }
    monkeypatch.setenv("SLACK_BOT_TOKEN", values["slack"])
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_fake")
    monkeypatch.setenv("LIBRARY_API_TOKEN", values["api"])  # named for the server: passes although it looks secret
    monkeypatch.setenv("LIBRARY_OTHER_TOKEN", "not-named")  # not named: stays with the watcher
    (tmp_path / "db-url").write_text(values["db"] + "\n", encoding="utf-8")
    return values


def _assert_granted_only(seen: dict[str, str], values: dict[str, str], run_dir: Path) -> None:
    assert seen["LIBRARY_API_TOKEN"] == values["api"]
    assert seen["LIBRARY_DB_URL"] == values["db"]  # read from the file, final newline dropped
    for name in ("SLACK_BOT_TOKEN", "GITHUB_TOKEN", "LIBRARY_OTHER_TOKEN"):
        assert name not in seen
    assert values["slack"] not in json.dumps(seen)
    for path in run_dir.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert not any(value in text for value in values.values()), path


def test_env_from_and_env_files_reach_the_server_and_the_slack_token_still_does_not(
    tmp_path: Path, envs: Path, monkeypatch: pytest.MonkeyPatch
):
    values = _granted_secrets_setup(tmp_path, monkeypatch)
    dump = tmp_path / "env.json"
    server = fixture_server(
        "envdump",
        "envdump_server",
        ["python", "-m", "envdump_server", "--port", "{port}"],
        env={"ENV_DUMP_FILE": str(dump)},
        env_from=["LIBRARY_API_TOKEN"],
        env_files={"LIBRARY_DB_URL": str(tmp_path / "db-url")},
    )
    loaded = write_config(tmp_path, [server], envs, sandbox=NO_SANDBOX)
    report = run_check(loaded, "envdump", "2.3.0")
    assert report["start"]["ok"], report["start"]["evidence"]
    assert report["start"]["dropped_env"] == []
    _assert_granted_only(json.loads(dump.read_text()), values, Path(report["run_dir"]))
    assert report["verdict"] == "pass", report["reasons"]


def test_a_stdio_server_gets_its_granted_variables_in_the_snapshot_too(
    tmp_path: Path, envs: Path, monkeypatch: pytest.MonkeyPatch
):
    values = _granted_secrets_setup(tmp_path, monkeypatch)
    dump = tmp_path / "env.json"
    server = fixture_server(
        "envdump",
        "envdump_server",
        ["python", "-m", "envdump_server"],
        transport="stdio",
        env={"ENV_DUMP_FILE": str(dump)},
        env_from=["LIBRARY_API_TOKEN"],
        env_files={"LIBRARY_DB_URL": str(tmp_path / "db-url")},
    )
    loaded = write_config(tmp_path, [server], envs, sandbox=NO_SANDBOX)
    report = run_check(loaded, "envdump", "2.3.0")
    assert report["start"]["ok"], report["start"]["evidence"]
    # The last copy that dumped its environment is the one the snapshot's client spawned.
    assert report["snapshot"]["eras"]["modern"]["status"] == "ok"
    _assert_granted_only(json.loads(dump.read_text()), values, Path(report["run_dir"]))
    manifest = json.loads((Path(report["run_dir"]) / "snapshot" / "snapshot.json").read_text())
    assert manifest["envNames"] == ["LIBRARY_API_TOKEN", "LIBRARY_DB_URL"]
    assert report["verdict"] == "pass", report["reasons"]


def test_stdio_server_skips_conformance_and_snapshots_over_stdio(tmp_path: Path, envs: Path):
    server = library_server(
        name="library-stdio", transport="stdio", start=["python", "-m", "library_server"], requirements=["2025-11-25"]
    )
    loaded = write_config(tmp_path, [server], envs)
    report = run_check(loaded, "library-stdio", "2.3.0")
    assert report["start"]["ok"], report["start"]
    assert report["start"]["url"] is None
    assert report["conformance"] == [
        {"requirements": "2025-11-25", "skipped": "the conformance suite tests servers over HTTP only"}
    ]
    assert report["snapshot"]["eras"]["legacy"]["status"] == "ok"
    # Same server, same SDK, other transport: the stored (HTTP) baseline shows no change.
    assert report["contract"]["changes"] == []
    assert report["verdict"] == "pass", report["reasons"]


def test_without_a_stored_baseline_one_is_taken_under_the_baseline_version_and_cached(tmp_path: Path, envs: Path):
    server = library_server(name="library-nostore", baseline_snapshot=None, requirements=[])
    loaded = write_config(tmp_path, [server], envs)
    first = run_check(loaded, "library-nostore", "2.2.0")
    baseline = Path(first["contract"]["baseline_snapshot"])
    assert (baseline / "complete").read_text() == "2.3.0"
    assert (Path(first["run_dir"]) / "baseline" / "server.stderr.log").exists()  # its server ran in this run
    # Taken the same way as the committed snapshot of the same server on the same SDK: identical contract.
    assert diff_snapshots(LIBRARY / "baseline-snapshot", baseline)["changes"] == []
    assert first["contract"]["changes"] == diff_snapshots(baseline, Path(first["run_dir"]) / "snapshot")["changes"]
    second = run_check(loaded, "library-nostore", "2.2.0")
    assert second["contract"]["baseline_snapshot"] == str(baseline)
    assert not (Path(second["run_dir"]) / "baseline").exists()  # reused, not taken again
    assert second["contract"]["changes"] == first["contract"]["changes"]


def test_pip_builds_the_environment_when_uv_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(toolchain, "uv", lambda: None)
    result = prepare_env(
        server_name="library-pip",
        language="python",
        project=LIBRARY,
        sdk_package="mcp",
        sdk_version="2.2.0",
        envs_dir=tmp_path / "envs",  # its own: it proves a cold build by pip
        timeout=300,
        secret_names=set(),
        boundary=sandbox.choose("none"),  # on the host, as the watcher's child
    )
    assert result.ok, result.evidence
    assert result.installer == "pip" and not result.cached
    python = Path(result.bin_dirs[0]) / "python"
    probe = "import importlib.metadata as m, library_server; print(m.version('mcp'))"
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    # The project pins the SDK it ships on; the environment has the version under test all the same.
    assert out.stdout.strip() == "2.2.0"


def test_a_cancelled_run_is_an_error_and_leaves_no_process(tmp_path: Path, envs: Path):
    pid_file = tmp_path / "pids"
    server = fixture_server(
        "hang", "hang_server", ["python", "-m", "hang_server"], env={"HANG_PID_FILE": str(pid_file)}
    )
    loaded = write_config(tmp_path, [server], envs, sandbox=NO_SANDBOX)
    cancel = threading.Event()

    def cancel_once_started() -> None:
        deadline = time.monotonic() + 120
        while not (pid_file.exists() and pid_file.read_text().endswith("\n")) and time.monotonic() < deadline:
            time.sleep(0.05)
        cancel.set()

    threading.Thread(target=cancel_once_started, daemon=True).start()
    started = time.monotonic()
    report = run_check(loaded, "hang", "2.3.0", cancel=cancel)
    assert report["verdict"] == "error"
    assert report["reasons"][-1] == {"verdict": "error", "reason": "cancelled"}
    assert time.monotonic() - started < 25  # well before the 30 s start timeout
    for pid in (int(p) for p in pid_file.read_text().split()):
        deadline = time.monotonic() + 5
        while process_running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not process_running(pid)
