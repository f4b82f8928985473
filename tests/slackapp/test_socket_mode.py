"""The real Bolt app over Socket Mode: it opens its connection through apps.connections.open on the loopback
Slack, and envelopes travel over a real WebSocket. The Accept… and Mute… modals, and /mcp-watcher."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.fakes.slack_server import wait_for
from tests.slackapp.helpers import (
    MEMBER,
    OUTSIDER,
    PACKAGE,
    SDK,
    SERVER,
    VERSION,
    click_payload,
    command_payload,
    pinned_clock,
    start_watcher,
    submission_payload,
    wait_responses,
)
from watcher.contract.accept import AcceptEntry
from watcher.core.timefmt import utcnow
from watcher.decisions import records
from watcher.polling.poll import _notify_teams
from watcher.sources.events import ReleaseEvent


@pytest.fixture
def watcher(tmp_path, slack, monkeypatch):
    with pinned_clock(monkeypatch):
        w = start_watcher(tmp_path, slack, monkeypatch, http=False, socket=True)
        try:
            yield w
        finally:
            w.close()


def _accept_values(picked: list[int], reason: str, expires: str) -> dict:
    return {
        "changes": {"picked": {"type": "multi_static_select", "selected_options": [{"value": str(i)} for i in picked]}},
        "reason": {"text": {"type": "plain_text_input", "value": reason}},
        "expires": {"date": {"type": "datepicker", "selected_date": expires}},
    }


def test_the_app_connects_with_its_app_token_and_acks_each_envelope(watcher, slack):
    assert "apps.connections.open" in slack.calls and slack.socket.connected == 1
    ack = slack.socket.send(
        "interactive", click_payload(slack, watcher.message("suite_result"), "mcpw_rerun", MEMBER, "1.1")
    )
    assert ack is not None and "envelope_id" in ack
    (reply,) = watcher.wait_replies(1)
    assert f"@{MEMBER.lower()} asked for a rerun" in reply["text"]


def test_a_retried_envelope_does_the_work_once(watcher, slack):
    payload = click_payload(slack, watcher.message("suite_result"), "mcpw_rerun", MEMBER, "1.2")
    assert slack.socket.send("interactive", payload, envelope_id="E1") is not None
    watcher.wait_replies(1)
    assert slack.socket.send("interactive", payload, envelope_id="E1", retry_attempt=1) is not None
    assert wait_for(lambda: records.actions(watcher.store)[0].deliveries == 2)
    runs = list(watcher.store.db.query("select id from runs"))
    assert len(runs) == 2 and len(watcher.replies()) == 1


def test_accept_opens_a_modal_and_stores_entries_the_diff_reads_like_the_files(watcher, slack):
    result = watcher.message("suite_result")
    slack.socket.send("interactive", click_payload(slack, result, "mcpw_accept", MEMBER, "1.3"))
    assert wait_for(lambda: slack.views), "no modal opened"
    view = slack.views[0]
    options = view["blocks"][0]["element"]["options"]
    assert [o["text"]["text"] for o in options] == [
        "tools/search_books: tool_removed",
        "tools/get_book inputSchema.properties.isbn: required_parameter_added",
    ]
    assert view["blocks"][2]["element"]["initial_date"] == "2027-01-02"  # 30 days after the pinned clock's today

    too_early = slack.socket.send(
        "interactive", submission_payload(view, MEMBER, _accept_values([1], "ok", "2026-12-03"))
    )
    assert too_early is not None and too_early["payload"]["response_action"] == "errors"
    assert set(too_early["payload"]["errors"]) == {"reason", "expires"}

    values = _accept_values([1], "isbn is sent by every client we know", "2027-01-15")
    closed = slack.socket.send("interactive", submission_payload(view, MEMBER, values))
    assert closed is not None and not closed.get("payload"), "a bare ack closes the modal"
    (reply,) = watcher.wait_replies(1)
    assert reply["thread_ts"] == watcher.message("release")["ts"]
    assert f"@{MEMBER.lower()} accepted 1 change(s) of *{SERVER}* until 2027-01-15" in reply["text"]
    (stored,) = records.accepts(watcher.store, SERVER)
    entry = AcceptEntry.model_validate(stored.entry)
    assert (entry.rule, entry.list_name, entry.name, entry.path) == (
        "required_parameter_added",
        "tools",
        "get_book",
        "inputSchema.properties.isbn",
    )
    assert entry.expires == dt.date(2027, 1, 15)
    assert str(entry.by).startswith(f"{MEMBER.lower()} ({MEMBER}) in Slack, 2026-12-03T")  # who and when
    (action,) = records.actions(watcher.store)
    assert action.action == "accept" and action.outcome == "accepted 1 change(s) until 2027-01-15"


def test_a_non_member_cannot_even_open_the_accept_modal(watcher, slack):
    slack.socket.send(
        "interactive", click_payload(slack, watcher.message("suite_result"), "mcpw_accept", OUTSIDER, "1.4")
    )
    (refusal,) = wait_responses(slack, 1)
    assert "Not done: only members of #books-mcp" in refusal["text"] and not slack.views


def test_mute_stops_the_teams_alerts_for_that_sdks_prereleases(watcher, slack):
    slack.socket.send("interactive", click_payload(slack, watcher.message("release"), "mcpw_mute", MEMBER, "1.5"))
    assert wait_for(lambda: slack.views)
    view = slack.views[0]
    values = {"days": {"number": {"type": "number_input", "value": "7"}}}
    slack.socket.send("interactive", submission_payload(view, MEMBER, values))
    (reply,) = watcher.wait_replies(1)
    assert f"muted {PACKAGE} pre-releases for team books for 7 day(s), until 2026-12-10" in reply["text"]
    assert records.muted_until(watcher.store, "books", SDK, utcnow()) is not None
    before = len(watcher.store.outbox())
    release = ReleaseEvent(
        SDK, "pypi", PACKAGE, "2.4.0b2", prerelease=True, yanked=False, published=None, first_seen="x"
    )
    _notify_teams(watcher.store, watcher.loaded.config, release)
    assert len(watcher.store.outbox()) == before, "a muted team got the alert"
    assert records.muted_until(watcher.store, "books", SDK, utcnow() + dt.timedelta(days=8)) is None


def test_slash_command_status_accepted_rerun_and_help(watcher, slack):
    send = slack.socket.send
    send("slash_commands", command_payload(slack, "help", MEMBER, "t1"))
    send("slash_commands", command_payload(slack, f"status {SERVER}", MEMBER, "t2"))
    answers = wait_responses(slack, 2)
    by_url = {a["url"]: a for a in answers}
    assert "`/mcp-watcher rerun SERVER VERSION`" in by_url["/response/cmd-t1"]["text"]
    assert f"*{SERVER}* (books): fail on {VERSION}" in by_url["/response/cmd-t2"]["text"]
    assert all(a["response_type"] == "ephemeral" for a in answers)

    send("slash_commands", command_payload(slack, f"rerun {SERVER} {VERSION}", OUTSIDER, "t3"))
    refusal = wait_responses(slack, 3)[2]
    assert "Not done: only members of #books-mcp" in refusal["text"]
    send("slash_commands", command_payload(slack, f"rerun {SERVER} {VERSION}", MEMBER, "t4"))
    assert wait_for(lambda: any("queued run 2" in a["text"] for a in slack.responses))
    send("slash_commands", command_payload(slack, f"rerun {SERVER} 9.9.9", MEMBER, "t5"))
    assert wait_for(lambda: any("not a version the watcher has seen" in a["text"] for a in slack.responses))
    queued = list(watcher.store.db.query("select trigger from runs where status = 'queued'"))
    assert len(queued) == 1 and queued[0]["trigger"].startswith("slack-rerun:")

    send("slash_commands", command_payload(slack, "accepted", MEMBER, "t6"))
    assert wait_for(lambda: any(a["url"] == "/response/cmd-t6" for a in slack.responses))
    accepted = next(a for a in slack.responses if a["url"] == "/response/cmd-t6")
    assert f"*{SERVER}*: nothing accepted" in accepted["text"]
    lines = [a.line() for a in records.actions(watcher.store)]
    assert any(
        f"{OUTSIDER.lower()} ({OUTSIDER}): rerun {SERVER} @ {VERSION} (slash command) → refused" in x for x in lines
    )


def test_muting_twice_keeps_one_mute_and_tells_the_second_one(watcher, slack):
    alert = watcher.message("release")
    slack.socket.send("interactive", click_payload(slack, alert, "mcpw_mute", MEMBER, "2.1"))
    slack.socket.send("interactive", click_payload(slack, alert, "mcpw_mute", MEMBER, "2.2"))
    assert wait_for(lambda: len(slack.views) == 2)
    values = {"days": {"number": {"type": "number_input", "value": "7"}}}
    slack.socket.send("interactive", submission_payload(slack.views[0], MEMBER, values))
    watcher.wait_replies(1)
    slack.socket.send("interactive", submission_payload(slack.views[1], MEMBER, values))
    assert wait_for(lambda: slack.ephemerals)
    assert "muted for books until 2026-12-10 already" in slack.ephemerals[0]["text"]
    assert len(records.mutes(watcher.store, utcnow())) == 1 and len(watcher.replies()) == 1
    bad = {"days": {"number": {"type": "number_input", "value": "0"}}}
    refused = slack.socket.send("interactive", submission_payload(slack.views[1], MEMBER, bad))
    assert refused is not None and refused["payload"]["errors"] == {"days": "A whole number of days, 1 to 365."}


def test_a_refused_socket_connection_is_logged_and_tried_again(tmp_path, slack, monkeypatch, caplog):
    from watcher.slackapp import connect

    monkeypatch.setattr(connect, "RETRY_SECONDS", 0.2)
    real = slack.app_token
    slack.app_token = "xapp-another-app"  # Slack refuses the service's token at first
    with pinned_clock(monkeypatch):
        monkeypatch.setenv("SLACK_APP_TOKEN", real)
        w = start_watcher(tmp_path, slack, monkeypatch, http=False, socket=False)
        try:
            w.credentials = type(w.credentials)(token=slack.token, app_token=real)
            w.app = connect.slack_app(w.loaded, w.store, w.credentials, w.deliver)
            w.app.connect()  # returns: the start goes on
            assert "Slack Socket Mode: cannot connect (invalid_auth)" in caplog.text
            slack.app_token = real
            assert slack.socket.wait_connected(), "not tried again"
        finally:
            w.close()


def test_a_modal_slack_will_not_open_is_said_to_the_user(watcher, slack):
    slack.fail_next("views.open", error="expired_trigger_id")
    slack.socket.send(
        "interactive", click_payload(slack, watcher.message("suite_result"), "mcpw_accept", MEMBER, "3.1")
    )
    (told,) = wait_responses(slack, 1)
    assert "Slack would not open the form (expired_trigger_id)" in told["text"] and not slack.views


def test_accepting_the_same_change_twice_stores_and_posts_it_once(watcher, slack):
    result = watcher.message("suite_result")
    slack.socket.send("interactive", click_payload(slack, result, "mcpw_accept", MEMBER, "4.1"))
    slack.socket.send("interactive", click_payload(slack, result, "mcpw_accept", MEMBER, "4.2"))
    assert wait_for(lambda: len(slack.views) == 2)
    values = _accept_values([0], "search moved to find_books", "2027-01-15")
    slack.socket.send("interactive", submission_payload(slack.views[0], MEMBER, values))
    watcher.wait_replies(1)
    slack.socket.send("interactive", submission_payload(slack.views[1], MEMBER, values))
    assert wait_for(lambda: slack.ephemerals)
    assert slack.ephemerals[0]["text"] == "Those changes are accepted already, until that day or later."
    assert len(records.accepts(watcher.store, SERVER)) == 1 and len(watcher.replies()) == 1
