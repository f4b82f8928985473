"""Environments built the moment a version is seen, so a run finds them warm.

When a poll queues runs, the service hands each (server, SDK version) to the ``Prebuilder``: at most
``suites.concurrency`` builds at once, in the background, each at most once per process. A run that
starts while its build is under way waits for it instead of building a second time; a build that
failed is the run's evidence (the run reports that failure, it does not build again, and nothing
retries in a loop). At the service's start the conformance suite is installed the same way.

The service activates one ``Prebuilder``; a run's install (`build/install.py`) asks ``prebuilt(...)``
(None when there is none, e.g. under ``mcp-watcher check``).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from watcher.boundary import toolchain
from watcher.config import LoadedConfig, secret_env_names
from watcher.core.errors import ConfigError
from watcher.live import ConfigSource, live_view
from watcher.suites.build import indexes, wheels
from watcher.suites.build.env import EnvResult, prepare_env
from watcher.suites.judge import conformance
from watcher.suites.state import sdk_package_of

log = logging.getLogger(__name__)

_active: Prebuilder | None = None
_active_lock = threading.Lock()


class Prebuilder:
    """Reads the service's live configuration for every build (a server added by a team file is built like
    any other); where builds go, how many at once and the boundary are fixed at start."""

    def __init__(self, source: ConfigSource, cancel: threading.Event | None = None) -> None:
        self.live = live_view(source)
        loaded = self.live.loaded
        self.cancel = cancel
        self.envs_dir = loaded.resolve(loaded.config.suites.envs_dir)
        self.pool = ThreadPoolExecutor(max_workers=loaded.config.suites.concurrency, thread_name_prefix="prebuild")
        self.builds: dict[tuple[str, str], Future[EnvResult]] = {}
        self.boundary = indexes.boundary(loaded.config)
        self._lock = threading.Lock()
        self._tools: Future[None] | None = None

    @property
    def loaded(self) -> LoadedConfig:
        return self.live.loaded

    def submit(self, server_name: str, sdk_version: str) -> bool:
        """Start building the server's environment under this version; False when already started, or when there
        is nothing to pre-build (a git or CI server, or one no longer configured: its queued run reports that)."""
        key = (server_name, sdk_version)
        try:
            server = self.loaded.config.server(server_name)
        except ConfigError:
            log.info("not pre-building %s: no such server is configured now", server_name)
            return False
        if server.path is None or server.source is not None or server.executor.kind != "local":
            return False  # its tree exists only once the run checks it out (git), or it runs in the team's CI
        with self._lock:
            if key in self.builds:
                return False
            self.builds[key] = self.pool.submit(self._build, server_name, sdk_version)
        log.info("pre-building %s under %s", server_name, sdk_version, extra={"server": server_name})
        return True

    def forget(self, server_name: str) -> int:
        """Drop the finished builds of a server whose definition changed (the next submit builds again);
        returns how many were dropped. A build under way is left to finish: its run waits for it."""
        with self._lock:
            done = [key for key, future in self.builds.items() if key[0] == server_name and future.done()]
            for key in done:
                del self.builds[key]
        return len(done)

    def wait(self, server_name: str, sdk_version: str) -> EnvResult | None:
        """The pre-build's result (waiting for it when under way), or None when none was started."""
        with self._lock:
            future = self.builds.get((server_name, sdk_version))
        return future.result() if future is not None else None

    def warm_tools(self) -> Future[None] | None:
        """Install the pinned conformance suite in the background once some server needs it (asked again when
        the server set changes; installed once, later runs reuse it)."""
        if not any(s.requirements and s.transport == "http" for s in self.loaded.config.servers):
            return None
        with self._lock:
            if self._tools is None:
                self._tools = self.pool.submit(self._install_conformance)
            return self._tools

    def shutdown(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    # --- in the pool ---------------------------------------------------------------------------------

    def _build(self, server_name: str, sdk_version: str) -> EnvResult:
        loaded = self.loaded
        config = loaded.config
        began = time.monotonic()
        try:
            server = config.server(server_name)
        except ConfigError as exc:  # retired between the submit and the build
            return EnvResult(
                ok=False, language="other", sdk_package="", sdk_version=sdk_version, path="", error=str(exc)
            )
        if self.boundary.refused:  # never build outside the boundary that was asked for
            return EnvResult(
                ok=False,
                language=server.language,
                sdk_package=sdk_package_of(config, server),
                sdk_version=sdk_version,
                path="",
                error=self.boundary.reason,
            )
        try:
            result = prepare_env(
                server_name=server.name,
                language=server.language,
                project=loaded.resolve(server.path or "."),
                sdk_package=sdk_package_of(config, server),
                sdk_version=sdk_version,
                envs_dir=self.envs_dir,
                timeout=server.timeouts.install,
                secret_names=secret_env_names(config),
                cancel=self.cancel,
                prepare=server.prepare,
                boundary=self.boundary,
                shared_wheels=wheels.for_config(loaded),
            )
        except Exception as exc:  # a bug of ours: the run reports it, the pool carries on
            log.exception("pre-build of %s under %s failed", server_name, sdk_version)
            return EnvResult(
                ok=False,
                language=server.language,
                sdk_package=sdk_package_of(config, server),
                sdk_version=sdk_version,
                path="",
                error=f"pre-build failed: {type(exc).__name__}: {exc}",
                seconds=time.monotonic() - began,
            )
        state = "ready (cached)" if result.cached else "built" if result.ok else f"FAILED: {result.error}"
        log.info(
            "pre-build of %s under %s: %s in %.1f s",
            server_name,
            sdk_version,
            state,
            result.seconds,
            extra={"server": server_name},
        )
        return result

    def _install_conformance(self) -> None:
        config = self.loaded.config
        if self.boundary.refused:
            log.warning("conformance suite not pre-installed: %s", self.boundary.reason)
            return
        try:
            tool = conformance.ensure_conformance(
                config.conformance.package,
                self.envs_dir / "_tools",
                registry=config.conformance.npm_registry,
                timeout=max((s.timeouts.install for s in config.servers), default=600),
                secret_names=secret_env_names(config),
                cancel=self.cancel,
                boundary=self.boundary,
            )
        except (conformance.ConformanceError, toolchain.ToolMissing) as exc:
            # The run reports it with its evidence when it needs the suite; no retry loop here.
            log.warning("conformance suite not pre-installed: %s", exc)
            return
        log.info("conformance suite ready: %s %s", tool.package, tool.version)


def activate(prebuilder: Prebuilder | None) -> None:
    """Make this the process's pre-builder (None: none; runs then build their own environments)."""
    global _active
    with _active_lock:
        _active = prebuilder


def prebuilt(server_name: str, sdk_version: str, envs_dir: Path) -> EnvResult | None:
    """The active pre-builder's result for this environment (waiting for it), or None."""
    with _active_lock:
        builder = _active
    if builder is None or builder.envs_dir != envs_dir:
        return None
    return builder.wait(server_name, sdk_version)
