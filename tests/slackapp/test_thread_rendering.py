"""The thread shown in docs/slack-app.md comes from a real run against the loopback Slack: a beta's alert and a
suite result with their buttons, a member's Rerun and Accept… and the replies they produced. This test makes
that run again and checks the page still shows what it produces."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fakes.slack_server import wait_for
from tests.slackapp.helpers import (
    MEMBER,
    click_payload,
    form,
    pinned_clock,
    render_thread,
    start_watcher,
    submission_payload,
)
from watcher.suites.worker import process_queue

DOC = Path(__file__).resolve().parents[2] / "docs" / "slack-app.md"
BEGIN, END = "<!-- thread: begin -->", "<!-- thread: end -->"


def produce_thread(tmp_path, slack, monkeypatch) -> str:
    with pinned_clock(monkeypatch):
        watcher = start_watcher(tmp_path, slack, monkeypatch)
        try:
            result = watcher.message("suite_result")

            def click(action_id: str, action_ts: str) -> int:
                return watcher.post(form(click_payload(slack, result, action_id, MEMBER, action_ts))).status_code

            assert click("mcpw_rerun", "1764763200.1") == 200
            watcher.wait_replies(1)
            process_queue(watcher.loaded, watcher.store)  # the rerun, by the real worker (the project is gone)
            watcher.deliver()
            assert click("mcpw_accept", "1764763200.2") == 200
            assert wait_for(lambda: slack.views)
            values = {
                "changes": {"picked": {"type": "multi_static_select", "selected_options": [{"value": "0"}]}},
                "reason": {"text": {"type": "plain_text_input", "value": "search moved to find_books in 2.4"}},
                "expires": {"date": {"type": "datepicker", "selected_date": "2027-01-31"}},
            }
            assert watcher.post(form(submission_payload(slack.views[0], MEMBER, values))).status_code == 200
            watcher.wait_replies(2)
            text = render_thread(watcher, watcher.message("release"))
            # What differs from one machine or run to the next: the state folder and the run's duration.
            text = text.replace(str(tmp_path), "/srv/mcp-watcher")
            return re.sub(
                r"Took \d+ s · run \d{8}T\d{6}Z-(\S+)-[0-9a-f]+\n", r"Took 0 s · run 20261203T120000Z-\1-…\n", text
            )
        finally:
            watcher.close()


def test_the_documented_thread_is_what_a_real_run_produces(tmp_path, slack, monkeypatch):
    produced = produce_thread(tmp_path, slack, monkeypatch)
    text = DOC.read_text(encoding="utf-8")
    documented = re.search(re.escape(BEGIN) + r"\n```text\n(.*?)```\n" + re.escape(END), text, re.S)
    assert documented is not None, f"{DOC.name} has no thread block between {BEGIN} and {END}"
    assert documented.group(1).strip() == produced.strip(), produced
