"""`mcp-watcher run --check`: what the service needs at start, checked without starting it.

The configuration (already read), the Slack credentials (and what Slack says of the bot token: accepted, its
scopes, the channels it is in; `watcher/notify/slack_check.py`) and the pages' access, the state's folder and
lock, the pages' templates and stylesheet inside the installed package, and the tools suite runs use
(Node, uv). An image build or an install script runs it instead of `--help`: a package that lacks its
data files fails here, not in a crash loop after deploy. It sits at the top, beside `cli` and `service`: it
asks the parts, the pages included, what each needs.
"""

from __future__ import annotations

import os
from pathlib import Path

from watcher.config import LoadedConfig, state_path
from watcher.core.errors import StateError
from watcher.core.instance import single_instance
from watcher.notify.destination import describe_destination
from watcher.notify.settings import slack_credentials
from watcher.notify.slack_check import check_slack
from watcher.web.app import package_files_check


def startup_check(loaded: LoadedConfig) -> list[str]:
    """Lines saying what was checked; raises ConfigError / StateError, or returns problems prefixed 'FAIL'."""
    lines = [f"config: {loaded.path}"]
    credentials = slack_credentials(loaded.config.slack)
    destination = describe_destination(loaded.config.slack, credentials)
    lines.append(f"notices go to: {destination.reason}")
    slack = check_slack(loaded.config, credentials)
    lines += [*slack.ok, *(f"WARNING: {w}" for w in slack.warnings), *(f"FAIL: {f}" for f in slack.failures)]
    endpoint = loaded.config.http
    if endpoint.enabled:
        from watcher.web.access import resolve_access

        resolve_access(endpoint)  # refused before anything starts: pages on a network without a token
        lines.append(f"pages: http://{endpoint.host}:{endpoint.port}/")
    path = state_path(loaded)
    folder = path.parent
    if folder.exists():
        if not os.access(folder, os.W_OK):
            raise StateError(f"{folder}: the state's folder cannot be written; fix its owner or mode")
        with single_instance(path):  # another service on this state is a start-up failure too
            pass
    lines.append(f"state: {path}")
    lines += package_files_check()
    lines += _tools()
    return lines


def _tools() -> list[str]:
    from watcher.boundary import toolchain

    lines = []
    try:
        lines.append(f"node: {toolchain.node()} ({toolchain.node_version()})")
    except Exception as exc:  # a missing tool is a finding of the check, not a crash of it
        lines.append(f"FAIL: node: {exc}")
    uv = toolchain.uv()
    lines.append(f"uv: {uv}" if uv and Path(uv).exists() else "FAIL: uv: not found (the `uv` dependency)")
    return lines
