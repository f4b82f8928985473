"""A recorded full cycle, byte for byte: poll → runs → notices → `/api/status`, on loopback and a fixed clock.

    .venv/bin/python bench/cycle_unchanged.py --record bench/baselines/cycle.json
    .venv/bin/python bench/cycle_unchanged.py --compare bench/baselines/cycle.json [--quick]

The cycle: three `mcp-watcher poll --suites --json` against the recorded registry pages on a loopback
registry (bench/fakes) — the first takes the baseline and queues the baselined server's run, the second
sees mcp 2.0.0rc1 appear, the third is quiet — with the real slack-sdk posting to the loopback Slack; the
queued runs go through the queue and the suite worker (the server's project folder does not exist, so each
run fails at install in milliseconds, through the same worker, judge and result notice as a real one).
Then `mcp-watcher status --json`, the store's runs and outbox, every Slack message, and `/api/status` from
the web app over the same state.

What depends on the moment or the machine is normalised: times near the fixed clock (the cycle's own
instants) become `<now>`, run ids `<run-id:N>`, Slack timestamps `<ts:N>` (in order of first sight), the
temporary folder `<tmp>`, durations and ages `<seconds>` ("Took 3 s" → "Took <n>"), log lines' wall-clock
prefix `<log-time>`. What the machine offers (the sandbox check in `/api/status`) stays: record and compare on
one machine. Times that come from the recorded pages (publish dates)
stay as they are. The record is canonical JSON (sorted keys, two-space indent).

--record PATH writes it; --compare PATH exits 1 with a unified diff when this checkout's record is not
byte-identical to PATH. One cycle is already quick: --quick (the smoke test's mode) is the same cycle.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

CLOCK_START = "2026-12-03T12:00:00Z"
"""A Thursday far from the default digest time (Monday 09:00 UTC): no digest is due during the cycle."""
os.environ["MCP_WATCHER_CLOCK_START"] = CLOCK_START  # before anything reads the clock (it is read once)
for _name in ("SLACK_BOT_TOKEN", "SLACK_WEBHOOK_URL", "SLACK_APP_TOKEN", "GITHUB_TOKEN", "MCP_WATCHER_CONFIG"):
    os.environ.pop(_name, None)

import yaml  # noqa: E402

from bench.fakes.mcp_history import MCP_PAGE, McpHistory  # noqa: E402
from bench.fakes.registry_server import FIXTURES, serve_registry  # noqa: E402
from bench.fakes.slack_server import FakeSlack  # noqa: E402

START = datetime.fromisoformat(CLOCK_START.replace("Z", "+00:00"))
NEAR = timedelta(hours=6)
"""A time within this of the fixed start is the cycle's own instant (the cycle takes seconds)."""
TOKEN = "xoxb-cycle-unchanged"


def config_data(root: Path, registry: Any, slack: FakeSlack) -> dict[str, Any]:
    return {
        "state": str(root / "state" / "watcher.db"),
        "sdks": [
            {"name": "python", "registry": "pypi", "package": "mcp", "url": registry.url("pypi/simple")},
            {
                "name": "typescript",
                "registry": "npm",
                "package": "@modelcontextprotocol/sdk",
                "url": registry.url("npm"),
            },
            {"name": "rust", "registry": "crates", "package": "rmcp", "url": registry.url("crates")},
        ],
        "teams": [
            {"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"], "servers": ["library"]},
            {
                "name": "infra",
                "slack_channel": "#infra-mcp",
                "sdks": ["python", "rust"],
                "notify_stable": True,
                "exclude": ["1.*"],
            },
            {"name": "web", "slack_channel": "#ops", "sdks": ["typescript"]},
        ],
        "servers": [
            {
                "name": "library",
                "team": "books",
                "sdk": "python",
                "language": "python",
                "path": "/nonexistent/cycle-unchanged/library",  # the run fails at install, at once
                "start": ["python", "-m", "library_server", "--port", "{port}"],
                "baseline_sdk_version": "1.9.0",
            }
        ],
        "suites": {"runs_dir": str(root / "runs"), "envs_dir": str(root / "envs")},
        "slack": {"api_url": slack.api_url, "retries": 1},
        "http_client": {"timeout_seconds": 2, "retries": 1, "backoff_seconds": 0},
    }


def cli(config: Path, *args: str) -> dict[str, Any]:
    """One `mcp-watcher` command in this process: its exit code and what it printed."""
    from watcher.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--config", str(config), *args])
    text = out.getvalue()
    printed: Any = text
    with contextlib.suppress(ValueError):
        printed = json.loads(text)
    return {"args": list(args), "code": code, "stdout": printed, "stderr": err.getvalue()}


def api_status(config: Path) -> Any:
    from starlette.testclient import TestClient

    from watcher.config import load_config
    from watcher.core.store import Store
    from watcher.ops.health import Readiness, build_app
    from watcher.web.access import Access
    from watcher.web.app import web_parts
    from watcher.web.context import WebContext

    loaded = load_config(config)
    store = Store(loaded.resolve(loaded.config.state))
    fixed = START + timedelta(minutes=1)
    ctx = WebContext(loaded, store, now=lambda: fixed)
    app = build_app(Readiness(store, 30, fixed, lambda: True), *web_parts(ctx, Access(None, False)))
    with TestClient(app) as client:
        response = client.get("/api/status")
    body = response.json()
    # Clusters are listed newest first by a time in seconds: two found in the same second (or not) are in
    # either order, so the record orders them by what they are.
    body["clusters"] = sorted(body.get("clusters") or [], key=lambda c: (c["sdk"], c["version"], c["signature"]))
    return {"status_code": response.status_code, "body": body}


def state_rows(config: Path) -> dict[str, Any]:
    from watcher.config import load_config
    from watcher.core.store import Store

    loaded = load_config(config)
    store = Store(loaded.resolve(loaded.config.state))
    runs = sorted((dict(r) for r in store.runs(limit=1000)), key=lambda r: (str(r["server"]), str(r["sdk_version"])))
    outbox = sorted((dict(r) for r in store.outbox()), key=lambda r: str(r["key"]))
    for row in runs + outbox:
        row.pop("id", None)  # sequence numbers: the order is in the sort
    return {"runs": runs, "outbox": outbox}


def cycle(root: Path) -> dict[str, Any]:
    """Run the whole cycle in `root`; the raw record (before normalising)."""
    registry_root = root / "registry"
    shutil.copytree(FIXTURES, registry_root)
    (root / "state").mkdir()
    history = McpHistory(registry_root / MCP_PAGE)
    history.before("2.0.0rc1")
    os.environ["SLACK_BOT_TOKEN"] = TOKEN
    try:
        with (
            serve_registry(registry_root) as registry,
            FakeSlack(token=TOKEN, channels=["#books-mcp", "#ops", "#infra-mcp"]) as slack,
        ):
            config = root / "watcher.yaml"
            config.write_text(yaml.safe_dump(config_data(root, registry, slack), sort_keys=False), encoding="utf-8")
            commands = [cli(config, "poll", "--suites", "--json")]  # the baseline, and the baselined run
            history.before("2.0.0")  # 2.0.0rc1 appears
            commands.append(cli(config, "poll", "--suites", "--json"))
            commands.append(cli(config, "poll", "--suites", "--json"))  # nothing new
            commands.append(cli(config, "status", "--json"))
            names = {slack.channel_id(name): name for name in slack.channels}
            messages = [{**m, "channel": names.get(m["channel"], m["channel"])} for m in slack.messages]
            return {
                "commands": commands,
                "state": state_rows(config),
                "slack": {"messages": messages, "calls": sorted(set(slack.calls))},
                "api_status": api_status(config),
            }
    finally:
        os.environ.pop("SLACK_BOT_TOKEN", None)


_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_RUN_ID = re.compile(r"\b\d{8}T\d{6}Z-[A-Za-z0-9.+_-]*?-[0-9a-f]{4,}\b")
_SLACK_TS = re.compile(r"\b1[6-9]\d{8}\.\d{6}\b")
_SECONDS_KEYS = re.compile(r"(^|_)(seconds|duration|elapsed|took|age)(_|$)")
_LOG_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} ", re.MULTILINE)
"""The logging module's own asctime: the wall clock's, not the service clock's."""
_TOOK = re.compile(r"\bTook \d+ (s|ms|min)\b")


class Normaliser:
    """Replaces what depends on the moment or the machine, numbering ids in order of first sight."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = str(tmp)
        self.tmp_real = str(tmp.resolve())
        self.ids: dict[str, dict[str, str]] = {"run-id": {}, "ts": {}}

    def _numbered(self, kind: str, found: str) -> str:
        seen = self.ids[kind]
        if found not in seen:
            seen[found] = f"<{kind}:{len(seen) + 1}>"
        return seen[found]

    def _time(self, match: re.Match[str]) -> str:
        text = match.group(0)
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return text
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return "<now>" if abs(moment - START) <= NEAR else text

    def text(self, value: str) -> str:
        value = value.replace(self.tmp_real, "<tmp>").replace(self.tmp, "<tmp>")
        value = _TOOK.sub("Took <n>", _LOG_TIME.sub("<log-time> ", value))
        value = _RUN_ID.sub(lambda m: self._numbered("run-id", m.group(0)), value)
        value = _SLACK_TS.sub(lambda m: self._numbered("ts", m.group(0)), value)
        return _ISO.sub(self._time, value)

    def value(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v, str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v, key) for v in value]
        if isinstance(value, float | int | str) and not isinstance(value, bool) and _SECONDS_KEYS.search(key):
            return "<seconds>"
        if isinstance(value, str):
            return self.text(value)
        return value


def canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def recorded_cycle() -> str:
    with tempfile.TemporaryDirectory(prefix="cycle-unchanged-") as tmp:
        root = Path(tmp)
        raw = cycle(root)
        # Through JSON first: what the store hands back (rows, dates) becomes what a reader of the record sees.
        plain = json.loads(json.dumps(raw, default=str))
        return canonical(Normaliser(root).value(plain))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", type=Path, metavar="PATH", help="write this checkout's record to PATH")
    parser.add_argument("--compare", type=Path, metavar="PATH", help="exit 1 with a diff unless identical to PATH")
    parser.add_argument("--quick", action="store_true", help="the smoke test's mode (one cycle: the same run)")
    args = parser.parse_args()
    started = time.perf_counter()
    text = recorded_cycle()
    seconds = time.perf_counter() - started
    record = json.loads(text)
    messages, runs = len(record["slack"]["messages"]), len(record["state"]["runs"])
    print(f"cycle: {len(text.encode())} bytes of record, {messages} Slack messages, {runs} runs, {seconds:.1f} s")
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(text, encoding="utf-8")
        print(f"recorded {args.record}")
    if args.compare:
        expected = args.compare.read_text(encoding="utf-8")
        if expected != text:
            diff = difflib.unified_diff(
                expected.splitlines(keepends=True), text.splitlines(keepends=True), str(args.compare), "this checkout"
            )
            sys.stdout.writelines(diff)
            print(f"DIFFERS from {args.compare}")
            return 1
        print(f"byte-identical to {args.compare} ({len(text.encode())} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
