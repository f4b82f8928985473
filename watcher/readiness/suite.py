"""The conformance suite as a watched npm source: polled through the npm adapter, each version read once.

Polling goes through the poller (conditional requests, the poll record); the suite is stored under the source
name ``SUITE_SOURCE`` and no team lists it, so its versions are never release notices. Reading a version installs
it into the tools environment (``conformance.ensure_conformance``, in a room of its own like any outside code: this
is the newest version, unpinned on purpose) and lists the ``requirements/<set>.yaml`` files it ships with the
server scenarios each scores.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import httpx

from watcher.config import LoadedConfig, secret_env_names
from watcher.core.errors import WatcherError
from watcher.core.store import Store
from watcher.polling.poll import SourceOutcome, fetch_source, record
from watcher.readiness.model import InspectedVersion
from watcher.sources.settings import SdkSource
from watcher.suites.build import indexes
from watcher.suites.judge import conformance

SUITE_SOURCE = "conformance-suite"
KV_INSPECTED = "readiness:suite-versions"
"""Suite version → {"sets": {set: [scenarios]}} or {"error": ...}: each version is read once."""


def suite_package(loaded: LoadedConfig) -> tuple[str, str | None]:
    """(package name, pinned version) from ``conformance.package``."""
    return conformance.split_package_spec(loaded.config.conformance.package)


def suite_source(loaded: LoadedConfig) -> SdkSource:
    name, _ = suite_package(loaded)
    return SdkSource(name=SUITE_SOURCE, registry="npm", package=name, url=loaded.config.conformance.npm_registry)


async def poll_suite(loaded: LoadedConfig, store: Store, client: httpx.AsyncClient | None = None) -> SourceOutcome:
    """One poll of the suite's package; new versions are stored like an SDK's (no team hears of them)."""
    config = loaded.config
    source = suite_source(loaded)
    own = client is None
    http = client or httpx.AsyncClient(headers={"User-Agent": config.http_client.user_agent}, follow_redirects=True)
    try:
        fetched = await fetch_source(http, store, config, source)
    finally:
        if own:
            await http.aclose()
    return record(store, config, source, fetched.started, fetched.releases, fetched.error, fetched.http)


@dataclass(frozen=True)
class SuiteVersion:
    version: str
    sets: dict[str, list[str]]
    """Requirement set → the server scenarios it scores."""
    root: Path | None = None
    error: str | None = None
    egress_refused: tuple[dict[str, object], ...] = ()
    """What the install room's egress proxy refused while this version was installed (the tool's record), or
    before its install failed."""


def tools_dir(loaded: LoadedConfig) -> Path:
    return loaded.resolve(loaded.config.suites.envs_dir) / "_tools"


def install(
    loaded: LoadedConfig, version: str, timeout: float = 600, cancel: threading.Event | None = None
) -> conformance.ConformanceTool:
    """The suite at `version`, installed once into the tools environment. Raises ConformanceError."""
    name, _ = suite_package(loaded)
    return conformance.ensure_conformance(
        f"{name}@{version}",
        tools_dir(loaded),
        boundary=indexes.boundary(loaded.config),
        registry=loaded.config.conformance.npm_registry,
        timeout=timeout,
        secret_names=secret_env_names(loaded.config),
        cancel=cancel,
    )


def read_sets(tool: conformance.ConformanceTool) -> dict[str, list[str]]:
    """Requirement set → its scored scenarios; one unreadable set (a link, an alias, a bare scalar, too
    large) is a ConformanceError for the whole version, naming the file and line."""
    return {name: list(conformance.load_requirement_set(tool, name).scored) for name in tool.requirement_sets()}


def inspect(loaded: LoadedConfig, store: Store, version: str, stop: threading.Event | None = None) -> SuiteVersion:
    """Install and read one suite version (once: the answer is kept in the state; an install `stop` cancelled
    is no answer, and the next pass tries again)."""
    seen: dict[str, InspectedVersion] = store.get_kv(KV_INSPECTED) or {}
    if version in seen and "sets" in seen[version]:
        tool = install(loaded, version, cancel=stop)  # already installed: the marker makes this a look-up
        return SuiteVersion(version, seen[version]["sets"], tool.root, egress_refused=tool.egress_refused)
    refused: tuple[dict[str, object], ...] = ()
    try:
        tool = install(loaded, version, cancel=stop)
        refused = tool.egress_refused
        sets = read_sets(tool)
    except (WatcherError, OSError, ValueError) as exc:  # ConformanceError, ToolMissing, a refused file
        refused = tuple(getattr(exc, "egress_refused", ())) or refused
        if stop is None or not stop.is_set():
            seen[version] = {"error": str(exc)}
            store.set_kv(KV_INSPECTED, seen)
        return SuiteVersion(version, {}, None, str(exc), refused)
    seen[version] = {"sets": sets}
    store.set_kv(KV_INSPECTED, seen)
    return SuiteVersion(version, sets, tool.root, egress_refused=refused)
