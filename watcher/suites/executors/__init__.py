"""Where a suite run happens: `local` (this machine, `suites.concurrency` at a time) or `github-actions`
(the team's own CI). Every executor returns the same report a local `check` writes."""

from __future__ import annotations

import threading

from watcher.config import LoadedConfig
from watcher.core.run_report import REPORT_VERSION, RunReport
from watcher.core.store import Store
from watcher.core.store_schema import RunRow
from watcher.suites.settings import GitHubActionsExecutor


def execute(loaded: LoadedConfig, store: Store, run: RunRow, stop: threading.Event | None) -> RunReport:
    """Run one queued run (a row of the store's queue) on its server's executor; raises ConfigError for
    a server no longer configured."""
    server = loaded.config.server(run["server"])
    from watcher.suites.runner import version_refusal
    from watcher.suites.state import ERROR

    refusal = version_refusal(loaded.config, server, run["sdk_version"])
    if refusal:  # queued before this check existed, or by hand: still never run, nor dispatched to CI
        return {
            "report_version": REPORT_VERSION,
            "server": server.name,
            "team": server.team,
            "sdk": server.sdk,
            "sdk_version": run["sdk_version"],
            "verdict": ERROR,
            "reasons": [{"verdict": ERROR, "reason": refusal}],
            "executor": server.executor.kind,
        }
    if isinstance(server.executor, GitHubActionsExecutor):
        from watcher.suites.executors.github_actions import run_on_actions

        return run_on_actions(loaded, store, run, server, server.executor, stop)
    from watcher.suites.executors.local import run_local

    return run_local(loaded, run, stop)
