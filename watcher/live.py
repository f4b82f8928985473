"""The one configuration a running service holds: the central file with every team repository's servers in
use merged in. Every part (the scheduler's jobs, the suite worker, the pre-builder, the pages, the Slack app,
readiness, the digest, `/api/status`) keeps this object and reads `.loaded` each time it needs the
configuration, never a copy of its own; `replace` swaps the whole of it at once, so a reader sees either the
old configuration or the new one, never a mix.

A command that runs once (`check`, `status`, `digest`, …) has no live object: it reads the central file and
the team servers of the last good sync recorded in the state (`watcher.repos.sync.effective_config`).
"""

from __future__ import annotations

import threading
from typing import TypeAlias

from watcher.config import LoadedConfig, WatcherConfig


class LiveConfig:
    def __init__(self, loaded: LoadedConfig, central: LoadedConfig | None = None) -> None:
        self._loaded = loaded
        self._central = central or loaded
        self._lock = threading.Lock()
        self.generation = 0
        """How many times it was replaced (the pages and tests can tell a new configuration)."""

    @property
    def loaded(self) -> LoadedConfig:
        """The configuration in force now: read it for each piece of work, do not keep it."""
        return self._loaded

    @property
    def config(self) -> WatcherConfig:
        return self._loaded.config

    @property
    def central(self) -> LoadedConfig:
        """The central file as written (without the team repositories' servers)."""
        return self._central

    def replace(self, loaded: LoadedConfig, central: LoadedConfig | None = None) -> LoadedConfig:
        """Put a new configuration in force (and the central file it came from); returns the one it replaced."""
        with self._lock:
            old = self._loaded
            if central is not None:
                self._central = central
            self._loaded = loaded
            self.generation += 1
        return old


ConfigSource: TypeAlias = LiveConfig | LoadedConfig
"""What a long-lived part is given: the service's live configuration, or (tests, one-off commands) a fixed one."""


def live_view(source: ConfigSource) -> LiveConfig:
    """The live configuration itself, or a fixed configuration wrapped as one that is never replaced."""
    return source if isinstance(source, LiveConfig) else LiveConfig(source)
