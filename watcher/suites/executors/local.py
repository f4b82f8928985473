"""The local executor: the run happens here, in a thread of the worker's pool (`suites.concurrency`).

Parallel runs are safe because everything they share is locked or private: one builder per
environment key (env.locked, also across processes), one fetch per git cache, one conformance tool
install, the cached baseline snapshot under its own lock, and a run folder of its own per run id.
"""

from __future__ import annotations

import threading

from watcher.config import LoadedConfig
from watcher.core.run_report import RunReport
from watcher.core.store_schema import RunRow
from watcher.suites.runner import run_check


def run_local(loaded: LoadedConfig, run: RunRow, stop: threading.Event | None) -> RunReport:
    report = run_check(loaded, run["server"], run["sdk_version"], cancel=stop)
    report["executor"] = "local"
    return report
