"""Class 6 (and the registry side of 7): a registry that trickles bytes, answers hugely or asks for a long
wait fails that source within bounded time and memory, and a refused body is never cached."""

from __future__ import annotations

import time
from pathlib import Path

from tests.reliability.conftest import python_only
from watcher.cli import main
from watcher.core.store import Store

MCP = "/pypi/simple/mcp/"


def poll(config: Path, capsys) -> tuple[int, str]:
    code = main(["--config", str(config), "poll"])
    return code, capsys.readouterr().out


def test_trickling_registry_hits_the_request_deadline(registry, write_config, capsys):
    data = python_only(registry)
    data["http_client"] = {"timeout_seconds": 2, "retries": 0, "request_deadline_seconds": 1.5}
    config = write_config(data)
    registry.fail(MCP, trickle=0.2)  # every read answers within 0.2 s: the per-read timeout never fires
    started = time.monotonic()
    code, out = poll(config, capsys)
    assert time.monotonic() - started < 10
    assert code == 3 and "no complete answer within the 1.5 s request deadline" in out


def test_retrying_source_hits_the_poll_deadline(registry, write_config, capsys):
    data = python_only(registry)
    data["http_client"] = {
        "timeout_seconds": 2,
        "retries": 10,
        "backoff_seconds": 0,
        "request_deadline_seconds": 0.8,
        "poll_deadline_seconds": 2,
    }
    config = write_config(data)
    registry.fail(MCP, trickle=0.2)
    started = time.monotonic()
    code, out = poll(config, capsys)
    assert time.monotonic() - started < 10, "eleven 0.8 s attempts would take 9 s; the poll stops at 2 s"
    assert code == 3 and "did not finish within 2 s (poll deadline)" in out


def test_oversized_answer_is_refused_and_never_cached(registry, write_config, capsys):
    data = python_only(registry)
    data["http_client"] = {"timeout_seconds": 5, "retries": 2, "backoff_seconds": 0, "max_response_bytes": 1_000_000}
    config = write_config(data)
    registry.fail(MCP, oversize=20_000_000)
    code, out = poll(config, capsys)
    assert code == 3 and "answer larger than 1,000,000 bytes refused" in out
    assert registry.stats.by_path[MCP] == 1, "a refused body is not fetched again in the same poll"
    store = Store(Path(config).parent / "state" / "watcher.db")
    assert list(store.db.query("select url from http_cache")) == [], "nothing refused lands in the cache"
    registry.clear_faults()
    assert poll(config, capsys)[0] == 0


def test_long_registry_retry_after_is_not_waited_for(registry, write_config, capsys):
    data = python_only(registry)
    data["http_client"] = {"timeout_seconds": 2, "retries": 3, "backoff_seconds": 0, "max_retry_after_seconds": 5}
    config = write_config(data)
    registry.fail(MCP, status=429, retry_after=120)
    started = time.monotonic()
    code, out = poll(config, capsys)
    assert time.monotonic() - started < 10
    assert code == 3 and "asking to wait 120 s" in out
    assert registry.stats.by_path[MCP] == 1
