"""`suites.sandbox: auto` on a machine where bubblewrap cannot run: outside code is refused — a run, a readiness
pass, the baseline command and `eval` each report why — unless the config says `none` (or its older spelling
`off`), the explicit opt-out, under which the same server runs on the host."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.registry_server import serve_registry
from tests.readiness.helpers import publish
from tests.reliability.helpers import node_server, pack, write_suite
from tests.suites.helpers import CLOSED, ROOT
from watcher.boundary import sandbox
from watcher.config import LoadedConfig, load_config
from watcher.core.clock import START_VARIABLE
from watcher.core.store import Store
from watcher.readiness.cycle import check_readiness
from watcher.suites.judge import baseline as baseline_command
from watcher.suites.runner import StepTarget, run_check, run_step

REFUSAL = "suites.sandbox is auto, but bubblewrap cannot run here (bwrap is not installed"


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)  # a machine without bubblewrap


def _config(tmp_path: Path, setting: str, registry: str = f"{CLOSED}/") -> LoadedConfig:
    server = {**node_server(tmp_path / "src", "declared"), "team": "books"}
    server["expected_failures"] = str(tmp_path / "expected.yml")
    data = {
        "state": str(tmp_path / "state" / "watcher.db"),
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": f"{CLOSED}/simple/"}],
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
        "conformance": {"package": "@modelcontextprotocol/conformance@1.0.0", "npm_registry": registry},
        "servers": [server],
        "suites": {"runs_dir": str(tmp_path / "runs"), "envs_dir": str(tmp_path / "envs"), "sandbox": setting},
    }
    (tmp_path / "state").mkdir(exist_ok=True)
    path = tmp_path / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_config(path, base_dir=ROOT)


def _seen(target: StepTarget) -> dict[str, Any]:
    return {"url": target.server.url, "in_room": target.server.netns_pid is not None}


@pytest.mark.usefixtures("no_bwrap")
def test_auto_without_bubblewrap_refuses_a_run_and_builds_nothing(tmp_path: Path) -> None:
    loaded = _config(tmp_path, "auto")
    report = run_check(loaded, "declared", "2.3.0")
    assert report["verdict"] == "error"
    [reason] = [r["reason"] for r in report["reasons"]]
    assert reason.startswith(REFUSAL) and "set suites.sandbox: none" in reason
    assert report["sandbox"]["refused"] is True
    assert report["install"] is None and report["start"] is None
    assert not (tmp_path / "envs" / "declared").exists()


@pytest.mark.usefixtures("no_bwrap")
@pytest.mark.parametrize("opt_out", ["none", "off"])
def test_the_explicit_opt_out_runs_the_same_server_on_the_host(tmp_path: Path, opt_out: str) -> None:
    loaded = _config(tmp_path, opt_out)
    report = run_step(loaded, "declared", "2.3.0", _seen)
    assert report["verdict"] == "pass", report["reasons"]
    assert report["install"]["ok"] and report["install"]["sandboxed"] is False
    assert report["step"]["in_room"] is False and report["step"]["url"].startswith("http://127.0.0.1:")
    assert report["sandbox"]["reason"] == f"suites.sandbox is {opt_out}"


@pytest.mark.usefixtures("no_bwrap")
def test_auto_without_bubblewrap_refuses_a_new_suite_version_before_npm_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(START_VARIABLE, "2026-12-01T09:00:00Z")
    with serve_registry(tmp_path / "registry") as registry:
        tree = write_suite(tmp_path / "package", "1.1.0", {"draft": ["server-reach"]})
        publish(registry.root, {"1.1.0": (pack(tree, tmp_path / "tarballs"), "2026-11-20T10:00:00.000Z")}, "1.1.0")
        loaded = _config(tmp_path, "auto", registry.base)
        summary = check_readiness(loaded, Store(loaded.resolve(loaded.config.state)), today=date(2026, 12, 1))
        tarball_requests = [path for path in registry.stats.by_path if path.startswith("/tarballs/")]
    assert summary["ok"] is False and summary["suite_version"] == "1.1.0"
    assert f"suite 1.1.0: @modelcontextprotocol/conformance@1.1.0 was not installed: {REFUSAL}" in summary["error"]
    assert tarball_requests == []  # npm never ran: nothing fetched the package
    assert not list((tmp_path / "envs").glob("_tools/conformance-*/node_modules"))


@pytest.mark.usefixtures("no_bwrap")
def test_auto_without_bubblewrap_refuses_the_baseline_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    loaded = _config(tmp_path, "auto")
    assert baseline_command.main(["--config", str(loaded.path), "--server", "declared", "--only", "failures"]) == 2
    assert f"\nbaseline: {REFUSAL}" in "\n" + capsys.readouterr().err  # its own line (a log line may come first)
    assert not (tmp_path / "expected.yml").exists() and not (tmp_path / "runs").exists()
