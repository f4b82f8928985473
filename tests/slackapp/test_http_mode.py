"""The real Bolt app behind POST /slack/events on the service's HTTP app, driven by signed requests against the
loopback Slack: signatures and the five-minute window, who may act, double clicks and retried deliveries."""

from __future__ import annotations

import httpx
import pytest

from tests.fakes.slack_server import wait_for
from tests.slackapp.helpers import (
    GROUPIE,
    MEMBER,
    OUTSIDER,
    SERVER,
    VERSION,
    click_payload,
    form,
    pinned_clock,
    sign,
    start_watcher,
    wait_responses,
)
from watcher.core import clock
from watcher.decisions import records


@pytest.fixture
def watcher(tmp_path, slack, monkeypatch):
    with pinned_clock(monkeypatch):
        w = start_watcher(tmp_path, slack, monkeypatch)
        try:
            yield w
        finally:
            w.close()


def _runs(watcher) -> list[dict]:
    return list(watcher.store.db.query("select id, trigger, status from runs order by id"))


def test_the_alert_and_the_result_carry_their_buttons(watcher):
    alert, result = watcher.message("release"), watcher.message("suite_result")
    assert result["thread_ts"] == alert["ts"]
    alert_buttons = [e["action_id"] for b in alert["blocks"] if b["type"] == "actions" for e in b["elements"]]
    result_buttons = [e for b in result["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert alert_buttons == ["mcpw_rerun", "mcpw_mute"]
    assert [e["action_id"] for e in result_buttons] == ["mcpw_rerun", "mcpw_accept", "mcpw_mute", "mcpw_open_run"]
    run_id = _runs(watcher)[0]["id"]
    assert result_buttons[-1]["url"] == f"https://watcher.example.org/runs/{run_id}"


def test_a_forged_signature_is_refused_with_401_and_changes_nothing(watcher, slack):
    body = form(click_payload(slack, watcher.message("suite_result"), "mcpw_rerun", MEMBER, "1764763200.000001"))
    now = int(clock.now().timestamp())
    assert watcher.post(body, signature="v0=" + "0" * 64).status_code == 401
    assert watcher.post(body, signature=sign(body, now, secret="not-the-secret")).status_code == 401
    assert watcher.post(body.replace(MEMBER, GROUPIE), signature=sign(body, now)).status_code == 401  # tampered
    assert watcher.post(body, signature=sign(body, now).replace("v0=", "v1=")).status_code == 401
    assert watcher.post(body, signature="").status_code == 401
    answer = httpx.post(watcher.url, content=body.encode(), timeout=5)  # no Slack headers at all
    assert answer.status_code == 401
    assert len(_runs(watcher)) == 1 and not records.actions(watcher.store) and not slack.responses


def test_a_stale_or_future_timestamp_is_refused_even_when_signed(watcher, slack):
    body = form(click_payload(slack, watcher.message("suite_result"), "mcpw_rerun", MEMBER, "1764763200.000002"))
    now = int(clock.now().timestamp())  # the pinned clock, not the machine's
    # A minute's margin past the five-minute window: the service reads its clock later, on a busy machine much later.
    assert watcher.post(body, timestamp=now - 360).status_code == 401
    assert watcher.post(body, timestamp=now + 360).status_code == 401
    assert _runs(watcher) == [{"id": 1, "trigger": f"release:python:{VERSION}", "status": "done"}]
    assert watcher.post(body, timestamp=now - 240).status_code == 200  # inside the window
    watcher.wait_replies(1)


def test_rerun_from_a_member_acks_at_once_and_replies_in_the_thread(watcher, slack):
    alert, result = watcher.message("release"), watcher.message("suite_result")
    slack.slow_next("conversations.members", 4)  # the membership check is slow: the ack must not wait for it
    answer = watcher.post(form(click_payload(slack, result, "mcpw_rerun", MEMBER, "1764763200.000003")))
    assert answer.status_code == 200 and answer.text == ""
    assert not watcher.replies() and len(_runs(watcher)) == 1, "answered before the work was done"
    (reply,) = watcher.wait_replies(1)
    assert reply["thread_ts"] == alert["ts"] and reply["channel"] == alert["channel"]
    assert f"@{MEMBER.lower()} asked for a rerun of *{SERVER}* on {VERSION}" in reply["text"]
    runs = _runs(watcher)
    assert [r["status"] for r in runs] == ["done", "queued"] and runs[1]["trigger"].startswith("slack-rerun:")
    (action,) = records.actions(watcher.store)
    assert (action.user_id, action.action, action.server, action.version) == (MEMBER, "rerun", SERVER, VERSION)
    assert action.message_ts == result["ts"] and action.outcome == f"queued run {runs[1]['id']}"


def test_a_click_from_a_non_member_is_refused_ephemerally_and_nothing_changes(watcher, slack):
    result = watcher.message("suite_result")
    body = form(click_payload(slack, result, "mcpw_rerun", OUTSIDER, "1764763200.000004"))
    assert watcher.post(body).status_code == 200
    (refusal,) = wait_responses(slack, 1)
    assert refusal["response_type"] == "ephemeral" and refusal["replace_original"] is False
    assert "only members of #books-mcp or the user group S0BOOKS" in refusal["text"]
    assert len(_runs(watcher)) == 1 and not watcher.replies()
    (action,) = records.actions(watcher.store)
    assert action.user_id == OUTSIDER and action.outcome.startswith("refused: only members of #books-mcp")


def test_a_member_of_the_teams_user_group_may_act(watcher, slack):
    result = watcher.message("suite_result")
    body = form(click_payload(slack, result, "mcpw_rerun", GROUPIE, "1764763200.000005"))
    assert watcher.post(body).status_code == 200
    (reply,) = watcher.wait_replies(1)
    assert f"@{GROUPIE.lower()}" in reply["text"] and len(_runs(watcher)) == 2


def test_a_double_click_queues_one_rerun_and_one_reply(watcher, slack):
    result = watcher.message("suite_result")
    first = form(click_payload(slack, result, "mcpw_rerun", MEMBER, "1764763200.000006"))
    second = form(click_payload(slack, result, "mcpw_rerun", MEMBER, "1764763200.000007"))
    assert watcher.post(first).status_code == 200
    watcher.wait_replies(1)
    assert watcher.post(second).status_code == 200
    (told,) = wait_responses(slack, 1)
    assert f"{SERVER} on {VERSION} is already queued" in told["text"] and told["response_type"] == "ephemeral"
    assert len(_runs(watcher)) == 2 and len(watcher.replies()) == 1
    outcomes = [a.outcome for a in records.actions(watcher.store)]
    assert outcomes[0].startswith("not queued: run 2 is already queued") and outcomes[1] == "queued run 2"


def test_a_retried_delivery_does_the_work_once(watcher, slack):
    body = form(click_payload(slack, watcher.message("suite_result"), "mcpw_rerun", MEMBER, "1764763200.000008"))
    assert watcher.post(body).status_code == 200
    watcher.wait_replies(1)
    retry = watcher.post(body, **{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})
    assert retry.status_code == 200
    assert wait_for(lambda: records.actions(watcher.store)[0].deliveries == 2)
    assert len(_runs(watcher)) == 2 and len(watcher.replies()) == 1 and not slack.responses


def test_open_run_is_a_link_and_only_acknowledged(watcher, slack):
    body = form(click_payload(slack, watcher.message("suite_result"), "mcpw_open_run", MEMBER, "1764763200.000009"))
    assert watcher.post(body).status_code == 200
    assert len(_runs(watcher)) == 1 and not records.actions(watcher.store)


def test_the_pages_token_does_not_guard_slack_events_and_get_is_not_served(watcher):
    assert httpx.get(watcher.url, timeout=5).status_code == 405


def test_a_slash_command_over_http_is_answered_ephemerally(watcher, slack):
    from urllib.parse import urlencode

    from tests.slackapp.helpers import command_payload

    answer = watcher.post(urlencode(command_payload(slack, f"status {SERVER}", MEMBER, "h1")))
    assert answer.status_code == 200
    (status,) = wait_responses(slack, 1)
    assert status["response_type"] == "ephemeral" and f"*{SERVER}* (books): fail on {VERSION}" in status["text"]


def test_the_rerun_result_is_a_new_reply_in_the_same_thread(watcher, slack):
    from watcher.suites.worker import process_queue

    alert = watcher.message("release")
    assert (
        watcher.post(
            form(click_payload(slack, watcher.message("suite_result"), "mcpw_rerun", MEMBER, "9.1"))
        ).status_code
        == 200
    )
    watcher.wait_replies(1)
    (outcome,) = process_queue(watcher.loaded, watcher.store)  # the real worker runs it (the project is gone)
    assert outcome["verdict"] == "fail" and outcome["notice"].endswith(":slack-rerun:1")
    watcher.deliver()
    results = [m for m in slack.messages if m["text"].startswith("FAIL: ")]
    assert len(results) == 2 and all(m["thread_ts"] == alert["ts"] for m in results)
    assert "project folder does not exist" in results[1]["text"]


def test_an_oversized_body_is_refused_unread(watcher):
    from watcher.ops.bodies import SLACK_EVENTS_LIMIT

    body = "payload=" + "x" * (SLACK_EVENTS_LIMIT + 1)
    assert watcher.post(body).status_code == 413
    assert not records.actions(watcher.store)
