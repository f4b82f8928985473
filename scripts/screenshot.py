"""Regenerates docs/status-page.png from a real run of the shipped config, in Debian's Chromium via Playwright.

    scripts/screenshot [--out docs/status-page.png] [--width 1280] [--timeout 1500]

`config/watcher.yaml` as shipped, with only what makes the run local and repeatable changed: every SDK
source's `url:` points at the loopback registry serving the recorded fixtures (tests/fixtures/registries),
the spec at a loopback GitHub fake serving the recorded registry page and releases, the state and run
folders in a temporary directory (the SDK environments stay in the checkout's `state/envs`, git-ignored,
so a second run is quicker), the clock pinned, no Slack credentials (notices go to the console).

The registry's history is replayed: a first `mcp-watcher poll` sees mcp's page as it was before 2.0.0a1
(the baseline; each example server is queued against its SDK's newest version, `suites.on_baseline`),
a second sees the whole recording, so 2.0's alphas, betas and release candidate arrive as new
pre-releases and queue their runs. Then `mcp-watcher run` starts as its own process and runs the queue
for real (SDKs installed from the package indexes, servers started, the conformance suite, the contract
diff); once it is empty the page is photographed at desktop width. Sources the recordings do not cover fail,
as they would against a registry that does not have them, and the page says so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.github_server import FakeGitHub  # noqa: E402
from tests.fakes.mcp_history import MCP_PAGE, McpHistory  # noqa: E402
from tests.fakes.registry_server import FIXTURES, REGISTRY_ROOTS, serve_registry  # noqa: E402
from tests.helpers import SERVICE_CLOCK_START, start_service  # noqa: E402
from tests.spec.helpers import REGISTRY_PATH, REPO, serve_spec  # noqa: E402
from tests.web.browser_helpers import CHROMIUM, NO_BROWSER, chromium, overflow  # noqa: E402
from watcher.core.clock import START_VARIABLE  # noqa: E402

SHIPPED = ROOT / "config" / "watcher.yaml"
SERVER_PATHS = ("path", "baseline_snapshot", "expected_failures")


def local_config(folder: Path, registry_base: str, gh: FakeGitHub) -> Path:
    """The shipped config, pointed at the loopback fakes, with its state in ``folder``."""
    data: dict[str, Any] = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    for sdk in data["sdks"]:
        sdk["url"] = f"{registry_base}/{REGISTRY_ROOTS[sdk['registry']]}"
    data["state"] = str(folder / "state" / "watcher.db")
    data["spec"] = {
        **(data.get("spec") or {}),
        "registry_url": gh.raw_url(REGISTRY_PATH),
        "repo": REPO,
        "github_api_url": gh.api_url,
    }
    data["suites"] = {
        **(data.get("suites") or {}),
        "runs_dir": str(folder / "runs"),
        "envs_dir": str(ROOT / "state/envs"),
    }
    for server in data["servers"]:
        for key in SERVER_PATHS:
            if server.get(key):
                server[key] = str((ROOT / server[key]).resolve())
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def poll(config: Path) -> None:
    """One `mcp-watcher poll` on the config, its clock pinned as the service's will be, no Slack variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    env[START_VARIABLE] = SERVICE_CLOCK_START
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "watcher.cli", "--config", str(config), "poll", "--no-deliver"],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    print(done.stdout.strip())
    if done.returncode not in (0, 3):  # 3: some source failed, which the page shows
        raise RuntimeError(f"mcp-watcher poll exited {done.returncode}:\n{done.stderr}")


def wait_for_runs(base: str, timeout: float) -> dict[str, Any]:
    """Until the first poll happened and every queued suite run finished; returns /api/status."""
    deadline = time.monotonic() + timeout
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        status = httpx.get(base + "/api/status", timeout=30).json()
        polled = all(s["last_poll"] for s in status["sources"])
        runs = status["runs"]
        if polled and runs["queued"] == 0 and runs["running"] == 0 and status["recent"]:
            return status
        time.sleep(5)
    raise TimeoutError(f"the suite runs did not finish in {timeout:.0f} s: {status.get('runs')}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "status-page.png")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--timeout", type=float, default=1500, help="seconds to wait for the suite runs")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        print(NO_BROWSER, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copytree(FIXTURES, folder / "registry")
        with serve_registry(folder / "registry") as registry, FakeGitHub() as gh:
            serve_spec(gh)
            config = local_config(folder, registry.base, gh)
            history = McpHistory(folder / "registry" / MCP_PAGE)
            history.before("2.0.0a1")
            poll(config)
            history.whole()
            poll(config)
            service = start_service(config, {}, folder / "service.log", clock_start=SERVICE_CLOCK_START)
            try:
                service.wait_http(timeout=120)
                status = wait_for_runs(service.base, args.timeout)
                with chromium() as browser:
                    page = browser.new_page(viewport={"width": args.width, "height": 900})
                    page.goto(service.base + "/")
                    sizes = overflow(page)
                    args.out.parent.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(args.out), full_page=True)
            finally:
                service.stop()
            log = (folder / "service.log").read_text(errors="replace")
    runs = [f"{r['server']} @ {r['sdk_version']}: {r['state']}" for r in status["recent"]]
    print(f"{args.out} ({args.width} px wide; scrollWidth {sizes['scrollWidth']}); runs: {'; '.join(runs)}")
    print(next((line for line in log.splitlines() if "status page:" in line), "(no status page line logged)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
