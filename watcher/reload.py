"""The service's live configuration kept current, and what each change of the server set leads to.

The central file is read again when its text changed (a file that no longer loads is said once and the
configuration in force stays); after every pass over the team repositories their servers in use are merged
in. Each time, the new whole replaces the live one (`watcher.live`) and its changes are recorded
(`watcher.serverset.changes`). Then:

- a server that **appeared** is pre-built, gets its first run on its baseline SDK version and, when that run
  is done, its onboarding message (a repository seen for the first time has one message for all its servers);
- a server that was **retired** leaves the queue (its queued runs are closed, saying why); its runs stay;
- a server that was **redefined** has its pre-built environments dropped and built again.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from watcher.config import LoadedConfig, load_config
from watcher.core.errors import ConfigError
from watcher.core.run_report import REPORT_VERSION, RunReport
from watcher.core.store import Store
from watcher.live import LiveConfig
from watcher.notify import keys
from watcher.repos.sync import RepoState, merged, placed_servers, repo_states
from watcher.serverset.changes import ServerChange, record_changes
from watcher.serverset.welcome import expect_welcome, forget_welcome
from watcher.suites.state import ERROR

if TYPE_CHECKING:
    from watcher.suites.build.prebuild import Prebuilder

log = logging.getLogger(__name__)

START_ONLY = ("state", "http", "slack", "log", "digest", "schedule")
"""Sections read once when the service starts (ports, credentials, the scheduler's intervals): a change to one
is said in the log and takes effect at the next start; everything else takes effect at once."""


class ConfigKeeper:
    def __init__(self, live: LiveConfig, store: Store, prebuilder: Callable[[], Prebuilder | None]) -> None:
        self.live = live
        self.store = store
        self.prebuilder = prebuilder
        self._lock = threading.Lock()
        self._digest = _digest_of(live.central)
        self._error: str | None = None

    @property
    def has_repos(self) -> bool:
        config = self.live.central.config
        return bool(config.repos or config.discover.github)

    # --- the central file --------------------------------------------------------------------------------

    def read_central(self) -> bool:
        """Read the central file again if its text changed; True when a new one was put in force. A file that
        does not load is said once (per distinct text) and the configuration in force stays."""
        central = self.live.central
        digest = _digest_of(central)
        if digest is None or digest == self._digest:
            return False
        self._digest = digest
        try:
            fresh = load_config(central.path, base_dir=central.base_dir)
        except ConfigError as exc:
            self._error = str(exc)
            log.error("the central config changed but cannot be used (the one in force stays): %s", exc)
            return False
        self._error = None
        later = [name for name in START_ONLY if getattr(fresh.config, name) != getattr(central.config, name)]
        if later:
            log.warning("central config: %s changed: read at start only, in force after a restart", ", ".join(later))
        log.info("central config read again: %s", central.path)
        self.live.replace(self.live.loaded, fresh)
        return True

    @property
    def central_error(self) -> str | None:
        """Why the changed central file is not in force (None: the one in force is the file's)."""
        return self._error

    # --- the whole ---------------------------------------------------------------------------------------

    def refresh(self, states: list[RepoState] | None = None, onboarding: Collection[str] = ()) -> list[ServerChange]:
        """Merge the team servers in use (``states``: this pass's; None: the last good ones in the state) into
        the central file, put the whole in force and act on what changed. ``onboarding``: servers of
        repositories seen for the first time, whose one message covers them."""
        with self._lock:
            central = self.live.central
            if states is None:
                states = repo_states(central.config, self.store) if self.has_repos else []
            loaded = merged(central, states)
            changes = record_changes(self.store, placed_servers(loaded, states))
            self.live.replace(loaded)
            self._act(loaded, states, changes, set(onboarding))
            return changes

    def _act(
        self, loaded: LoadedConfig, states: list[RepoState], changes: list[ServerChange], covered: set[str]
    ) -> None:
        builder = self.prebuilder()
        for change in changes:
            if change.kind == "retired":
                forget_welcome(self.store, change.name)
                self._close_queued(change)
                continue
            server = loaded.config.server(change.name)
            version = server.baseline_sdk_version
            if change.kind == "appeared" and change.name not in covered:
                state = next((s for s in states if any(x["name"] == change.name for x in s.servers)), None)
                self.store.queue_run(server.name, server.sdk, version, keys.server_onboarding_trigger(server.name))
                expect_welcome(
                    self.store,
                    change,
                    version,
                    state.detections.get(change.name) if state else None,
                    state.overridden.get(change.name) if state else None,
                )
            if builder is not None:
                if change.kind == "redefined":
                    builder.forget(change.name)
                builder.submit(change.name, version)
        if builder is not None and any(c.kind == "appeared" for c in changes):
            builder.warm_tools()

    def _close_queued(self, change: ServerChange) -> None:
        reason = f"{change.name} was retired before this run started (no longer in its config)"
        for run in self.store.runs(status="queued", server=change.name):
            report: RunReport = {
                "report_version": REPORT_VERSION,
                "server": change.name,
                "sdk_version": run["sdk_version"],
                "verdict": ERROR,
            }
            self.store.finish_run(run["id"], ERROR, {**report, "reasons": [{"verdict": ERROR, "reason": reason}]}, 0)


def _digest_of(loaded: LoadedConfig) -> str | None:
    try:
        return hashlib.sha256(loaded.path.read_bytes()).hexdigest()
    except OSError:
        return None
