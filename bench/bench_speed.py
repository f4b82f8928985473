"""Speed to evidence: a beta's publication → the alert → the threaded result, with the service running.

    .venv/bin/python bench/bench_speed.py [--window-minutes 1] [--version 2.3.0] [--skip-live] [--quick]

Two parts:
- cadence (simulated clock): requests per day over a simulated year from the cadence function, for the
  shipped configuration, against today's flat 30-minute default;
- live: the real service (`mcp-watcher run`, its clock pinned inside a beta window) polls 20 sources on a
  loopback registry (bench/fakes/registry_server.py), posts to a loopback Slack, and runs the example
  server examples/library. Right after the baseline poll, a real `mcp` version this machine can install
  (`--version`) is published on the loopback registry as new. Measured: publication → alert posted and
  publication → threaded result posted, with the parts (detection, queue, environment, suite, delivery),
  beside the conformance suite's own time against the same server (bench_suite.suite_alone).
  The environments folder starts empty (cold); the installers' download caches are the machine's.
Goals: detection <= window cadence + 5 s; cold run (queue + environment + suite) <= 1.5 x the suite alone;
requests/day (yearly average) <= today's default.
--quick: the cadence part only (the smoke test runs it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_suite import suite_alone  # noqa: E402
from bench.fakes.mcp_history import MCP_PAGE, McpHistory  # noqa: E402
from bench.fakes.registry_server import FIXTURE_SOURCES, FIXTURES, FakeRegistry  # noqa: E402
from bench.fakes.slack_server import FakeSlack  # noqa: E402
from bench.service import Service, wait_until  # noqa: E402
from watcher.config import load_config  # noqa: E402
from watcher.core.store import Store  # noqa: E402
from watcher.polling.cadence import plan_budget, simulate_requests  # noqa: E402
from watcher.spec.calendar import ReleaseCalendar  # noqa: E402

CLOCK_START = "2027-03-04T12:00:00Z"
"""Inside the beta window of the release projected for 2027-03-30; a Thursday, so no digest is due."""
DETECTION_SLACK, COLD_GOAL = 5.0, 1.5
TODAY_MINUTES = 30


def cadence_part() -> bool:
    loaded = load_config(ROOT / "config" / "watcher.yaml")
    budget = plan_budget(loaded.config)
    calendar = ReleaseCalendar.from_settings(loaded.config.spec.calendar)
    per_day = simulate_requests(budget, calendar, [], datetime(2027, 1, 1, tzinfo=UTC), 365)
    today = len(loaded.config.sdks) * 1440 / TODAY_MINUTES
    average = sum(per_day) / len(per_day)
    print(f"cadence (shipped config, simulated 2027): {json.dumps(budget.as_json())}")
    print(
        f"  requests/day: average {average:.0f}, peak {max(per_day)}, lowest {min(per_day)}; "
        f"today (every {TODAY_MINUTES} min) {today:.0f}"
    )
    print(f"  detection delay inside a window <= {budget.window_minutes:g} min (today {TODAY_MINUTES} min)")
    return average <= today


def live_config(folder: Path, registry: FakeRegistry, slack: FakeSlack, window: float) -> Path:
    shipped = yaml.safe_load((ROOT / "config" / "watcher.yaml").read_text(encoding="utf-8"))
    sdks = []
    for i, (kind, package, root) in enumerate(s for s in FIXTURE_SOURCES if s[2] != "pypi/crafted"):
        name = "python" if root == "pypi/simple" else f"s{i}-{kind}"
        sdks.append({"name": name, "registry": kind, "package": package, "url": registry.url(root)})
    server = next(s for s in shipped["servers"] if s["name"] == "library")
    for key in ("path", "baseline_snapshot", "expected_failures"):
        if server.get(key):
            server[key] = str((ROOT / "config" / server[key]).resolve())  # the config file's folder
    data = {
        "state": str(folder / "watcher.db"),
        "sdks": sdks,
        "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"], "notify_stable": True}],
        "slack": {"api_url": slack.api_url, "retries": 1},
        "schedule": {"poll_minutes": TODAY_MINUTES, "window_poll_minutes": window, "deliver_seconds": 5},
        "spec": {"registry_url": registry.url("no-spec-registry.mdx"), "github_api_url": registry.url("github")},
        "conformance": shipped.get("conformance", {}),
        "servers": [{**server, "team": "books"}],
        "suites": {
            "runs_dir": str(folder / "runs"),
            "envs_dir": str(folder / "envs"),
            "on_stable": True,
            "on_baseline": False,
        },
        "http_client": {"timeout_seconds": 5, "retries": 0},
    }
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def live_part(window: float, version: str, folder: Path) -> bool:
    root = folder / "registry"
    shutil.copytree(FIXTURES, root)
    history = McpHistory(root / MCP_PAGE)
    history.before(version)
    registry = FakeRegistry(root).start()
    slack = FakeSlack(token="xoxb-bench", channels=["#books-mcp"]).start()
    config = live_config(folder, registry, slack, window)
    service = Service(config, {"SLACK_BOT_TOKEN": slack.token}, folder / "service.log", clock_start=CLOCK_START)
    try:
        service.wait_http(60)
        service.wait_for_log("baseline taken for python", timeout=60)
        service.wait_for_log("conformance suite ready", timeout=600)  # a long-running service has it by now
        registry.reset_stats()
        published = time.monotonic()
        history.before(_next_version(history, version))  # `version` appears
        wait_until(
            lambda: any(_key(m).startswith(f"release:python:{version}:") for m in slack.messages),
            timeout=window * 60 + 60,
            interval=0.02,
            message="the alert",
        )
        alert = time.monotonic() - published
        wait_until(
            lambda: any(_key(m).startswith(f"run:library:{version}:") for m in slack.messages),
            timeout=900,
            interval=0.05,
            message="the result",
        )
        result = time.monotonic() - published
        requests = registry.stats.requests
    finally:
        service.stop()
        registry.stop()
        slack.stop()
    store = Store(folder / "watcher.db")
    (run,) = store.runs(status="done")
    timings, report = run["report"]["timings"], run["report"]
    store.close()
    detection = alert  # the alert is posted by the poll that saw the version; delivery is ~ms on loopback
    queue, build, suite = timings["queue_seconds"], timings["build_seconds"], timings["suite_seconds"]
    # Queue time comes from whole-second stored times: the remainder is delivery, to about a second.
    delivery = max(0.0, result - detection - queue - build - suite)
    alone, per_set = suite_alone(config, "library", version)
    cold = queue + build + suite
    print(
        f"live: library x mcp {version} (published as new), window cadence {window:g} min, verdict {report['verdict']}"
    )
    print(f"  publication -> alert posted          : {alert:6.1f} s (published right after a poll: the worst case)")
    print(f"  publication -> threaded result posted: {result:6.1f} s")
    print(
        f"  parts: detection {detection:.1f} s, queue {queue:.1f} s, environment {build:.1f} s "
        f"(pre-built: {timings['prebuilt']}), suite {suite:.1f} s, delivery {delivery:.1f} s (queue and delivery +-1 s)"
    )
    print(f"  conformance suite alone: {alone:.1f} s ({', '.join(f'{t:.1f}' for t in per_set)})")
    print(f"  cold run (queue + environment + suite): {cold:.1f} s = {cold / alone:.2f} x suite alone")
    print(f"  registry requests between publication and result: {requests}")
    ok_detection = detection <= window * 60 + DETECTION_SLACK
    ok_cold = cold / alone <= COLD_GOAL
    print(f"  detection goal (<= {window * 60 + DETECTION_SLACK:.0f} s): {'met' if ok_detection else 'NOT met'}")
    print(f"  cold-run goal (<= {COLD_GOAL} x): {'met' if ok_cold else 'NOT met'}")
    return ok_detection and ok_cold


def _key(message: dict[str, Any]) -> str:
    return str(((message.get("metadata") or {}).get("event_payload") or {}).get("key", ""))


def _next_version(history: McpHistory, version: str) -> str:
    """The version right after `version` in the recorded page (so the cut lets `version` in)."""
    from packaging.version import Version

    listed = sorted({Version(v) for v in json.loads(history.full)["versions"]})
    later = [v for v in listed if v > Version(version)]
    return str(later[0]) if later else "999"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window-minutes", type=float, default=1.0)
    parser.add_argument("--version", default="2.3.0", help="a real mcp version this machine can install")
    parser.add_argument("--skip-live", action="store_true")
    parser.add_argument("--quick", action="store_true", help="the cadence simulation only (the smoke test's mode)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    ok = cadence_part()
    if not (args.skip_live or args.quick):
        folder = Path(tempfile.mkdtemp(prefix="bench-speed-"))
        try:
            ok = live_part(args.window_minutes, args.version, folder) and ok
        finally:
            if args.keep:
                print(f"kept {folder}")
            else:
                shutil.rmtree(folder, ignore_errors=True)
    print("goals met" if ok else "goals NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
