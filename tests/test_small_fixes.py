"""Issue 21's smaller items: poll log lines name their group, an outside failure of the spec logs at WARNING
as an SDK source's does, and `outbox` counts the notices only printed to the console."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.fakes.registry_server import FakeRegistry, serve_registry
from tests.helpers import free_port
from watcher.cli import main
from watcher.config import load_config, open_state
from watcher.core.errors import PollFailed
from watcher.core.store_schema import Notice
from watcher.service import Service


@pytest.fixture
def registry():
    with serve_registry() as fake:
        yield fake


def _config(write_config, registry: FakeRegistry, closed: str) -> Path:
    return write_config(
        {
            "sdks": [
                {"name": "python", "registry": "pypi", "package": "mcp", "url": registry.url("pypi/simple")},
                {"name": "typescript", "registry": "npm", "package": "@modelcontextprotocol/sdk", "url": closed + "/"},
            ],
            "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"], "notify_stable": True}],
            "spec": {"registry_url": closed + "/deprecated.mdx", "github_api_url": closed},
            "http_client": {"timeout_seconds": 2, "retries": 0, "backoff_seconds": 0},
        }
    )


def test_poll_lines_name_their_group_and_outside_failures_warn(
    write_config, registry: FakeRegistry, caplog: pytest.LogCaptureFixture
):
    closed = f"http://127.0.0.1:{free_port()}"
    loaded = load_config(_config(write_config, registry, closed))
    store = open_state(loaded)
    service = Service(loaded, store)
    service.digest_caught_up = True  # no digest catch-up in this test
    caplog.set_level(logging.INFO, logger="watcher")
    try:
        service.poll_sdks(("python",), job="poll_window_sdks")
        with pytest.raises(PollFailed):  # every source of that group failed: the job fails, as before
            service.poll_sdks(("typescript",), job="poll_sdks")
        service.poll_spec()
    finally:
        store.close()
    polls = [r for r in caplog.records if r.getMessage().startswith("poll: ")]
    assert [(r.levelno, r.getMessage().split(" (", 1)[1]) for r in polls] == [
        (logging.INFO, "baseline taken) (the beta-window SDKs, 1 source(s))"),
        (logging.WARNING, "the outside-window SDKs, 1 source(s))"),
    ]
    [spec] = [r for r in caplog.records if r.getMessage().startswith("spec poll:")]
    assert spec.levelno == logging.WARNING and spec.getMessage().startswith("spec poll: failed: ")


def test_outbox_counts_the_console_only_notices(
    write_config, registry: FakeRegistry, capsys: pytest.CaptureFixture[str]
):
    config = _config(write_config, registry, f"http://127.0.0.1:{free_port()}")
    loaded = load_config(config)
    store = open_state(loaded)
    store.enqueue(
        Notice(key="test:console:1", team="books", channel="#books-mcp", kind="release", text="hi", blocks=[])
    )
    store.close()
    main(["--config", str(config), "poll"])  # no Slack: the notice goes to the console
    capsys.readouterr()
    assert main(["--config", str(config), "outbox"]) == 0
    out = capsys.readouterr().out
    assert "outbox: nothing pending, nothing failed" in out
    assert "were printed to the console only; `mcp-watcher outbox --resend-console` posts them" in out
    assert "outbox: 1 notice(s) were printed to the console only" in out
