"""`language: other`: a build the server declares (prepare steps + start), run like the built-in ones."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from tests.suites.helpers import LIBRARY, write_config
from watcher.boundary import sandbox, toolchain
from watcher.suites.build.declared import substitute
from watcher.suites.build.env import prepare_env
from watcher.suites.notices import render
from watcher.suites.runner import run_check


def declared_server(prepare: list[list[str]], start: list[str], **overrides) -> dict:
    server = {
        "name": "declared",
        "team": "books",
        "sdk": "python",
        "language": "other",
        "path": str(LIBRARY),
        "transport": "http",
        "prepare": prepare,
        "start": start,
        "baseline_sdk_version": "2.3.0",
        "baseline_snapshot": str(LIBRARY / "baseline-snapshot"),
        "requirements": [],
        "timeouts": {"install": 300, "start": 60, "suite": 300, "snapshot": 60},
    }
    return {**server, **overrides}


def test_placeholders_are_substituted_in_every_argument():
    args = ["go", "get", "{package}@{version}", "-o", "{workdir}/server", "--port={port}"]
    assert substitute(args, version="1.2.0", package="example.invalid/sdk", workdir="/w", port=8123) == [
        "go",
        "get",
        "example.invalid/sdk@1.2.0",
        "-o",
        "/w/server",
        "--port=8123",
    ]
    assert substitute(["{port}"], version="1", package="p", workdir="/w") == ["{port}"]


def test_a_failing_prepare_step_is_an_error_naming_the_step_with_its_last_output(tmp_path: Path):
    failing = "import sys; print('compiling cmd/server'); print('boom: no such module', file=sys.stderr); sys.exit(3)"
    server = declared_server(
        [["python", "-c", "print('step one ok')"], ["python", "-c", failing]], ["{workdir}/server", "{port}"]
    )
    loaded = write_config(tmp_path, [server], tmp_path / "envs")
    report = run_check(loaded, "declared", "2.3.0")
    assert report["verdict"] == "error"
    [reason] = [r["reason"] for r in report["reasons"]]
    assert "prepare step 2 (python -c import sys;" in reason and "exit code 3" in reason
    assert "boom: no such module" in report["install"]["evidence"]
    assert "compiling cmd/server" in report["install"]["evidence"]
    log = Path(report["install"]["log"]).read_text()
    assert "[step 1]" in log and "step one ok" in log and "[step 2]" in log
    text, _ = render(report)
    assert "prepare step 2" in text and "boom: no such module" in text
    assert report["start"] is None


def test_prepare_steps_get_a_scrubbed_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-" + "1" * 20)
    monkeypatch.setenv("TEAM_API_KEY", "k" * 20)
    dump = "import os, json; json.dump(dict(os.environ), open('{workdir}/env.json', 'w'))"
    env = prepare_env(
        server_name="declared",
        language="other",
        project=LIBRARY,
        sdk_package="mcp",
        sdk_version="2.3.0",
        envs_dir=tmp_path / "envs",
        timeout=60,
        secret_names={"SLACK_BOT_TOKEN"},
        boundary=sandbox.choose("none"),  # on the host, as the watcher's child
        prepare=[["python", "-c", dump]],
    )
    assert env.ok, env.error
    seen = (Path(env.project_dir) / "env.json").read_text()
    assert "SLACK_BOT_TOKEN" not in seen and "TEAM_API_KEY" not in seen and "xoxb-" not in seen


def test_two_runs_needing_one_environment_at_once_build_it_once(tmp_path: Path):
    """The concurrency guarantee of the local pool: one build per environment key, the other waits."""
    counter = tmp_path / "builds.txt"
    step = f"import time; open({str(counter)!r}, 'a').write('build\\n'); time.sleep(1.0)"
    results = []

    def build() -> None:
        results.append(
            prepare_env(
                server_name="declared",
                language="other",
                project=LIBRARY,
                sdk_package="mcp",
                sdk_version="2.3.0",
                envs_dir=tmp_path / "envs",
                timeout=60,
                secret_names=set(),
                boundary=sandbox.choose("none"),  # on the host, as the watcher's child
                prepare=[["python", "-c", step]],
            )
        )

    threads = [threading.Thread(target=build) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert counter.read_text() == "build\n"
    assert all(r.ok for r in results) and sorted(r.cached for r in results) == [False, True, True]
    assert len({r.path for r in results}) == 1


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_python_server_pinned_through_prepare_runs_end_to_end(tmp_path: Path):
    venv = "{workdir}/.venv"
    server = declared_server(
        [
            ["uv", "venv", "--quiet", "--python", toolchain.python(), venv],
            ["uv", "pip", "install", "--quiet", "--python", f"{venv}/bin/python", ".", "{package}=={version}"],
        ],
        [f"{venv}/bin/python", "-m", "library_server", "--port", "{port}"],
        requirements=["2025-11-25"],
        expected_failures=str(LIBRARY / "conformance-baseline.yml"),
    )
    loaded = write_config(tmp_path, [server], tmp_path / "envs")
    report = run_check(loaded, "declared", "2.3.0")
    assert report["install"]["ok"] and report["install"]["installer"] == "prepare"
    assert report["verdict"] == "pass", report["reasons"]
    site = Path(report["install"]["project_dir"]) / ".venv" / "lib"
    assert list(site.glob(f"python3.{sys.version_info.minor}/site-packages/mcp-2.3.0.dist-info"))
    # The start command (inside the sandbox's wrapper where one is used) runs the venv the steps made.
    assert any(part.endswith("/.venv/bin/python") for part in report["start"]["command"])
    assert report["contract"]["changes"] == []
    [conformance] = report["conformance"]
    assert not conformance["unexpected_failures"] and conformance["expected_failures"]
