"""The weekly digest's parent message gets *Open deprecations* when Slack can answer and the pages have a URL."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.digest.helpers import build_state
from watcher.config import LoadedConfig
from watcher.digest.schedule import send_due_digests

DUE = datetime.fromisoformat("2026-11-30T14:30:00+00:00")


@pytest.mark.parametrize("interactive", [True, False])
def test_the_digest_links_the_deprecations_page(tmp_path, monkeypatch, interactive):
    if interactive:
        monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
        monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")
    state = build_state(tmp_path)
    config = state.loaded.config
    config = config.model_copy(update={"http": config.http.model_copy(update={"public_url": "https://w.example.org/"})})
    loaded = LoadedConfig(config=config, path=state.loaded.path, base_dir=state.loaded.base_dir)
    assert send_due_digests(loaded, state.store, DUE) == ["digest:books:2026-W49"]
    parent, *replies = [r for r in state.store.outbox() if r["kind"] == "digest"]
    actions = [b for b in parent["blocks"] if b["type"] == "actions"]
    if interactive:
        (block,) = actions
        assert block["elements"] == [
            {
                "type": "button",
                "text": {"type": "plain_text", "text": "Open deprecations"},
                "action_id": "mcpw_open_deprecations",
                "url": "https://w.example.org/deprecations",
            }
        ]
    else:
        assert actions == []
    assert all(b["type"] != "actions" for r in replies for b in r["blocks"])
