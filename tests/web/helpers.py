"""A state built by real suite runs of the example servers (and one hostile fixture server), for the page tests.

The verdicts come from the real runner: SDK versions installed from the package index, servers started, the
real conformance suite (one requirement set, for the library) and the real snapshot diff. Only what a registry
would have told the poller (the versions seen) and an outbox failure are written directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from tests.fakes.github_server import FakeGitHub
from tests.spec.helpers import poll, serve_spec, spec_config
from tests.suites.helpers import CONFORMANCE, LIBRARY, ROOT, library_server
from watcher.config import LoadedConfig, load_config
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.core.timefmt import iso
from watcher.suites.worker import process_queue, queue_for_release

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
"""The pages' clock in every test (runs finished just before it, by the real clock, show as "0 s" old)."""
VERSION_PAYLOAD = "2.4.0b1<script>window.__pwned='version'</script>"
SECRETS = {
    "SLACK_BOT_TOKEN": "xoxb-1111-web-test-secret",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T000/B000/websecretwebhook",
    "GITHUB_TOKEN": "ghp_webtestsecretwebtestsecret0000",
    "MCP_WATCHER_PAGE_TOKEN": "page-token-web-test-0000",
}


@dataclass
class BuiltState:
    loaded: LoadedConfig
    store: Store
    verdicts: dict[tuple[str, str], str]
    """(server, sdk version) → the verdict its real run gave."""
    run_ids: dict[tuple[str, str], int]


def servers() -> list[dict]:
    return [
        library_server(requirements=["2025-11-25"]),
        library_server(
            name="library-breaking",
            start=["python", "-m", "library_server", "--variant", "v3-breaking", "--port", "{port}"],
            requirements=[],
        ),
        library_server(
            name="xss",
            path=str(FIXTURES / "xss_server"),
            start=["python", "-m", "xss_server", "--port", "{port}"],
            baseline_snapshot=str(LIBRARY / "baseline-snapshot"),
            requirements=[],
            expected_failures=None,
        ),
    ]


def write_config(folder: Path, envs: Path, gh: FakeGitHub) -> LoadedConfig:
    (folder / "state").mkdir(parents=True, exist_ok=True)  # a configured state's folder must exist
    data = {
        **spec_config(gh, teams=[{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python", "typescript"]}]),
        "state": str(folder / "state" / "watcher.db"),
        "sdks": [
            {"name": "python", "registry": "pypi", "package": "mcp"},
            {"name": "typescript", "registry": "npm", "package": "@modelcontextprotocol/sdk"},
        ],
        "conformance": {"package": CONFORMANCE},
        "servers": servers(),
        "suites": {"runs_dir": str(folder / "runs"), "envs_dir": str(envs)},
    }
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_config(path, base_dir=ROOT)


def build_state(folder: Path, envs: Path) -> BuiltState:
    with FakeGitHub() as gh:
        serve_spec(gh)
        loaded = write_config(folder, envs, gh)
        store = Store(loaded.resolve(loaded.config.state))
        summary = poll(loaded, store, NOW.date().isoformat())  # the spec registry and releases, read once
        assert summary.get("ok"), summary
    for version, prerelease in (("2.2.0", False), ("2.3.0", False), ("1.27.0", False), (VERSION_PAYLOAD, True)):
        store.db["versions"].insert(
            {
                "sdk": "python",
                "registry": "pypi",
                "package": "mcp",
                "version": version,
                "prerelease": int(prerelease),
                "yanked": 0,
                "published": iso(NOW),
                "first_seen": iso(NOW),
                "baseline": int(not prerelease),
            }
        )
    # Real runs: every python server against 2.3.0 (queued the way a new release queues them), the library
    # against 1.27.0, an SDK its code does not import under.
    queue_for_release(loaded, store, "python", "2.3.0", prerelease=True)
    store.queue_run("library", "python", "1.27.0", "manual")
    process_queue(loaded, store)
    # Then a release the registry named with a payload. The watcher no longer queues a version that holds
    # unsafe characters (watcher.sources.versions.run_refusal); a state written before it did, so the rows are put
    # in by hand, one per python server, one of them picked up: the pages must keep such text as text.
    for server in loaded.config.servers:
        if server.sdk == "python":
            store.queue_run(server.name, "python", VERSION_PAYLOAD, f"release:python:{VERSION_PAYLOAD}")
    store.claim_run()
    store.enqueue(Notice("run:library:2.3.0:ops", "books", "#books-mcp", "run", "text", []))
    row = store.outbox_row("run:library:2.3.0:ops")
    assert row is not None
    store.update_outbox(row["id"], status="failed", last_error=f"invalid_auth (sent {SECRETS['SLACK_BOT_TOKEN']})")
    verdicts, run_ids = {}, {}
    for run in store.runs(limit=1000):
        run_ids[(run["server"], run["sdk_version"])] = run["id"]
        if run["status"] == "done":
            verdicts[(run["server"], run["sdk_version"])] = run["verdict"]
    return BuiltState(loaded, store, verdicts, run_ids)
