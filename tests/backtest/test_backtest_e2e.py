"""End to end: a recorded history of `mcp` on the loopback registry, real servers, real `mcp` versions
installed through the machine's package index, the real suite runner. Five versions per backtest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.backtest.helpers import (
    CLOCK_START,
    ROOT,
    SHORT_HISTORY,
    SINCE,
    UNTIL,
    either_server,
    fastmcp_server,
    write_config,
    write_history,
)
from tests.fakes.registry_server import serve_registry
from tests.helpers import ignoring_sigint
from tests.suites.helpers import process_running
from watcher.backtest import timeline
from watcher.backtest.render import render_text
from watcher.backtest.replay import run_backtest
from watcher.cli import main
from watcher.core.store import Store
from watcher.ops.health import Readiness, build_app
from watcher.web.access import Access
from watcher.web.app import web_parts
from watcher.web.context import WebContext

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("backtest-e2e"), pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("backtest-envs")


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("registry")
    write_history(root)
    with serve_registry(root) as fake:
        yield fake


def _backtest(loaded, store: Store, server: str) -> dict:
    return run_backtest(loaded, store, server, date.fromisoformat(SINCE), date.fromisoformat(UNTIL))


def test_a_1x_server_is_told_at_the_first_2x_prerelease_47_days_before_2_0_0(
    tmp_path: Path, envs: Path, registry, capsys: pytest.CaptureFixture[str]
):
    loaded = write_config(tmp_path, registry.url("pypi/simple"), [fastmcp_server()], envs)
    store = Store(loaded.resolve(loaded.config.state))
    answer = _backtest(loaded, store, "notes-1x")
    assert [v["version"] for v in answer["versions"]] == list(SHORT_HISTORY)  # publication order
    verdicts = {v["version"]: v["verdict"] for v in answer["versions"]}
    assert verdicts == {"1.27.2": "pass", "2.0.0a1": "fail", "2.0.0b1": "fail", "2.0.0rc1": "fail", "2.0.0": "fail"}
    [warned] = answer["warned"]
    assert (warned["line"], warned["kind"], warned["status"]) == ("2.x", "start", "warned")
    assert warned["first_version"] == "2.0.0a1" and warned["first_published"].startswith("2026-06-11")
    assert warned["final_version"] == "2.0.0" and warned["final_published"].startswith("2026-07-28")
    assert warned["lead_days"] == 47
    assert "No module named 'mcp.server.fastmcp'" in warned["evidence"]
    assert warned["sentence"] == (
        "2.0.0a1 (2026-06-11) would have told you the server no longer starts under 2.x: 47 days before 2.0.0"
    )
    assert answer["final_only"] == []
    assert answer["status"] == "done" and answer["cost"] == {**answer["cost"], "ran": 5, "reused": 0}
    # Stored like any run: each version's report is in its run folder, and the backtest keeps the answer.
    for version in answer["versions"]:
        report = json.loads((Path(version["run_dir"]) / "report.json").read_text())
        assert report["sdk_version"] == version["version"] and report["verdict"] == version["verdict"]
    stored = store.backtest(answer["id"])
    assert stored is not None and stored["status"] == "done" and stored["answer"]["warned"] == answer["warned"]
    # A second backtest over the same period runs nothing.
    again = _backtest(loaded, store, "notes-1x")
    assert again["cost"]["ran"] == 0 and again["cost"]["reused"] == 5
    assert again["warned"] == answer["warned"]
    _check_outputs(loaded, store, again, capsys)


def _check_outputs(loaded, store: Store, answer: dict, capsys) -> None:
    """The renderings of one real answer: Markdown by the command, the picture, the pages, the Slack post."""
    argv = ["--config", str(loaded.path), "backtest", "--server", "notes-1x", "--since", SINCE, "--until", UNTIL]
    assert main([*argv, "--format", "markdown", "--post"]) == 0
    out, err = capsys.readouterr()
    assert "| 2.x | the server no longer starts | `2.0.0a1` (2026-06-11) | `2.0.0` (2026-07-28) | 47 days |" in out
    assert "[5/5] 2.0.0: fail (reused)" in err  # the progress lines (stderr is not a terminal here)
    [posted] = [row for row in store.outbox() if row["kind"] == "backtest"]
    assert posted["channel"] == "#books-mcp" and posted["status"] == "console"
    assert "47 days before 2.0.0" in posted["text"] and Path(posted["files"][0]["path"]).read_bytes()[:4] == b"\x89PNG"

    picture = timeline.render(answer)
    assert [(m.version, m.verdict, m.prerelease) for m in picture.markers] == [
        ("1.27.2", "pass", False),
        ("2.0.0a1", "fail", True),
        ("2.0.0b1", "fail", True),
        ("2.0.0rc1", "fail", True),
        ("2.0.0", "fail", False),
    ]
    assert picture.lines == ["1.x", "2.x"]
    assert picture.arrows == [timeline.LeadArrow("2.x", date(2026, 6, 11), date(2026, 7, 28), "47 d")]

    ctx = WebContext(loaded, store, now=lambda: datetime(2026, 12, 1, 12, tzinfo=UTC))
    client = TestClient(build_app(Readiness(store, 30, ctx.now(), lambda: True), *web_parts(ctx, Access(None, False))))
    assert 'href="/backtests"' in client.get("/").text  # the status page links the backtests
    listing = client.get("/backtests").text
    [latest] = store.latest_backtests()  # the command's repeat above, a backtest of its own
    assert latest["id"] > answer["id"] and f'href="/backtests/{latest["id"]}"' in listing
    page = client.get(f"/backtests/{answer['id']}")
    assert page.status_code == 200
    assert (
        "2.0.0a1 (2026-06-11) would have told you the server no longer starts under 2.x: 47 days before 2.0.0"
        in page.text
    )
    assert 'data-version="2.0.0a1" data-verdict="fail"' in page.text
    png = client.get(f"/backtests/{answer['id']}/timeline.png")
    assert png.headers["content-type"] == "image/png" and png.content[:4] == b"\x89PNG"
    assert client.get("/backtests/999").status_code == 404


def test_a_server_that_starts_under_both_lines_is_told_of_2x_s_contract_change_at_the_first_beta(
    tmp_path: Path, envs: Path, registry
):
    loaded = write_config(tmp_path, registry.url("pypi/simple"), [either_server()], envs)
    store = Store(loaded.resolve(loaded.config.state))
    answer = _backtest(loaded, store, "notes-both")
    verdicts = [v["verdict"] for v in answer["versions"]]
    assert verdicts == ["pass", "pass", "fail", "fail", "fail"]  # 1.27.2 and 2.0.0a1 serve it alike
    [warned] = answer["warned"]
    assert (warned["kind"], warned["key"]) == ("contract", "error_code_changed:unknown_resource.code")
    assert (warned["first_version"], warned["final_version"], warned["lead_days"]) == ("2.0.0b1", "2.0.0", 28)
    assert answer["final_only"] == []
    text = render_text(answer).splitlines()
    assert text[0] == f"Backtest #{answer['id']}: notes-both against mcp {SINCE} … {UNTIL} (5 versions)"
    [b1] = [line for line in text if line.startswith("2026-06-30")]
    assert b1.split()[:4] == ["2026-06-30", "2.0.0b1", "pre-release", "FAIL"]
    assert b1.endswith("a change that breaks clients: error_code_changed at unknown_resource.code")
    assert (
        "  • 2.0.0b1 (2026-06-30) would have told you a change that breaks clients: error_code_changed at "
        "unknown_resource.code under 2.x: 28 days before 2.0.0" in text
    )


def test_a_server_that_starts_under_both_lines_has_no_problem_and_no_lead_time(tmp_path: Path, envs: Path, registry):
    # The team has judged the one contract change 2.x brings (the error code of an unknown resource) harmless
    # for its clients; with that, nothing in the period breaks this server.
    server = either_server(contract={"levels": {"error_code_changed": "models"}})
    loaded = write_config(tmp_path, registry.url("pypi/simple"), [server], envs, concurrency=2)
    store = Store(loaded.resolve(loaded.config.state))
    answer = _backtest(loaded, store, "notes-both")
    assert [v["verdict"] for v in answer["versions"]] == ["pass"] * 5
    assert answer["findings"] == [] and answer["warned"] == [] and answer["final_only"] == []
    assert all(v["problems"] == [] for v in answer["versions"])
    assert [v["version"] for v in answer["versions"]] == list(SHORT_HISTORY)  # two at a time, still in order


def test_a_version_that_cannot_be_installed_is_a_result(tmp_path: Path, envs: Path):
    # The registry lists a version the package index does not have (as after a deletion): the backtest
    # reports it as an install problem and goes on.
    root = tmp_path / "registry"
    page = write_history(root, ["2.0.0a1"])
    data = json.loads(page.read_text())
    ghost = {**data["files"][0], "filename": "mcp-2.0.0a9-py3-none-any.whl", "upload-time": "2026-06-20T10:00:00Z"}
    data["files"].append(ghost)
    data["versions"].append("2.0.0a9")
    page.write_text(json.dumps(data))
    with serve_registry(root) as fake:
        loaded = write_config(tmp_path, fake.url("pypi/simple"), [fastmcp_server()], envs)
        store = Store(loaded.resolve(loaded.config.state))
        answer = _backtest(loaded, store, "notes-1x")
    assert [(v["version"], v["verdict"]) for v in answer["versions"]] == [("2.0.0a1", "fail"), ("2.0.0a9", "fail")]
    [ghost_problem] = answer["versions"][1]["problems"]
    assert ghost_problem["kind"] == "install" and ghost_problem["text"] == "mcp no longer installs"
    assert answer["status"] == "done" and {f["kind"] for f in answer["findings"]} == {"start", "install"}


def _wait_for(predicate, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.2)


GATED_START = """
import os, pathlib, sys, time
version, port, gate = sys.argv[1:4]
if pathlib.Path(gate).is_file() and pathlib.Path(gate).read_text() == version:
    pathlib.Path(gate + ".reached").write_text(str(os.getpid()))
    time.sleep(3600)
os.execv(sys.executable, [sys.executable, "-m", "fastmcp_notes", "--port", port])
"""
"""The server's start, held forever under the version the gate file names (while the file is there)."""


def test_an_interrupted_backtest_resumes_without_rerunning_finished_versions(tmp_path: Path, envs: Path, registry):
    # Deterministic: the third version's server is held at its start until the signal, so exactly two
    # versions finished, one was cut short and two never started (runs go one at a time, in publication order).
    gate = tmp_path / "gate"
    gate.write_text("2.0.0b1")
    server = fastmcp_server(
        start=["python", "-c", GATED_START, "{version}", "{port}", str(gate)],
        timeouts={"install": 300, "start": 600, "suite": 120, "snapshot": 120},
    )
    # Without a room, so that the held server can say it was reached (and the test see its PID).
    loaded = write_config(tmp_path, registry.url("pypi/simple"), [server], envs, sandbox="off", concurrency=1)
    env = {**os.environ, "MCP_WATCHER_CLOCK_START": CLOCK_START, "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "watcher.cli", "--config", str(loaded.path), "backtest", "--server", "notes-1x"]
    argv += ["--since", SINCE, "--until", UNTIL, "--json"]
    reached = tmp_path / "gate.reached"
    # Started as a script's `cmd &` starts it: SIGINT ignored, so only the watcher's own handler can stop it.
    first = subprocess.Popen(
        ignoring_sigint(argv), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait_for(reached.exists, 300)
        _wait_for(lambda: reached.read_text().isdigit(), 10)
        held = int(reached.read_text())
        first.send_signal(signal.SIGINT)  # the main process alone, as a supervisor sends it
        out, err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 130, err
    assert not process_running(held), "the held server outlived the interrupted backtest"
    interrupted = json.loads(out)
    assert interrupted["status"] == "interrupted"
    verdicts = [(v["version"], v["verdict"]) for v in interrupted["versions"]]
    assert verdicts == [("1.27.2", "pass"), ("2.0.0a1", "fail")] + [(v, "not run") for v in SHORT_HISTORY[2:]]
    assert interrupted["not_run"] == ["2.0.0b1", "2.0.0rc1", "2.0.0"]
    finished = ["1.27.2", "2.0.0a1"]
    runs_before = {p.name for p in (tmp_path / "runs" / "notes-1x").iterdir()}

    gate.unlink()
    second = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    answer = json.loads(second.stdout)
    assert answer["id"] == interrupted["id"]  # the same backtest, continued
    assert answer["status"] == "done" and answer["not_run"] == []
    reused = [v["version"] for v in answer["versions"] if v["reused"]]
    assert reused == finished
    assert answer["cost"]["ran"] == 3
    new_runs = {p.name for p in (tmp_path / "runs" / "notes-1x").iterdir()} - runs_before
    assert sorted(r.split("-", 1)[1].rsplit("-", 1)[0] for r in new_runs) == sorted(set(SHORT_HISTORY) - set(finished))
    assert [w["lead_days"] for w in answer["warned"]] == [47]
    assert "reused" in second.stderr
