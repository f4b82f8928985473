"""poll_spec against the fake GitHub: baseline, change notices (once, across restarts), operator alerts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.spec.helpers import REGISTRY_PATH, REPO, fixture, poll, serve_spec, spec_config, spec_releases
from watcher.config import LoadedConfig, load_config
from watcher.core.store import Store
from watcher.notify.delivery import WebApiSink, deliver_outbox
from watcher.notify.settings import SlackSettings
from watcher.spec.watch import KV_LAST_GOOD, KV_REVISIONS


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        serve_spec(fake)
        yield fake


def open_state(write_config, config: dict) -> tuple[LoadedConfig, Store]:
    loaded = load_config(write_config(config))
    return loaded, Store(loaded.resolve(loaded.config.state))


def notices(store: Store, channel: str | None = None) -> list[dict]:
    return [n for n in store.outbox() if channel is None or n["channel"] == channel]


def test_first_poll_is_a_baseline_without_notices(gh, write_config):
    loaded, store = open_state(write_config, spec_config(gh, operators_channel="#ops"))
    summary = poll(loaded, store)
    assert summary["ok"] is True and summary["error"] is None
    assert summary["baseline"] is True and summary["revisions_baseline"] is True
    assert summary["note"] == "baseline taken: 6 rows, no notices for rows already listed"
    assert summary["changes"] == [] and summary["notices"] == 0
    assert summary["current_revision"] == "2026-07-28"
    assert summary["unresolved"] == []
    assert notices(store) == []
    again = poll(loaded, store)
    assert again["baseline"] is False and again["changes"] == [] and again["not_modified"] is True
    assert gh.requests[-2].headers.get("if-none-match")  # the registry was asked conditionally


def test_each_change_reaches_each_subscribed_team_once_across_restarts(gh, write_config):
    config = spec_config(gh, operators_channel="#ops")
    loaded, store = open_state(write_config, config)
    poll(loaded, store)
    before_change = {key: store.get_kv(key) for key in (KV_LAST_GOOD, KV_REVISIONS)}

    gh.put_raw(REGISTRY_PATH, fixture("registry_next.mdx"))
    gh.set_releases(REPO, spec_releases(FakeGitHub.release("2027-03-30-RC", "2026-11-20T10:00:00Z", prerelease=True)))
    summary = poll(loaded, store)
    kinds = sorted((c["kind"], c["subject"]) for c in summary["changes"])
    assert kinds == [
        ("deprecation-gone", "Dynamic Client Registration"),
        ("earliest-removal-changed", "Roots"),
        ("moved-to-removed", "Logging"),
        ("new-deprecation", "Resource subscriptions"),
        ("new-rc", "2027-03-30-RC"),
    ]
    sent = notices(store)
    assert len(sent) == 5 * 2 == summary["notices"]  # two teams with spec_news; "quiet" opted out
    assert {n["team"] for n in sent} == {"books", "infra"}
    assert len({n["key"] for n in sent}) == 10
    assert len(store.events()) == 5

    roots = next(n for n in sent if n["team"] == "books" and n["kind"] == "spec-earliest-removal-changed")
    assert "Before: Deprecated (deprecated in 2026-07-28, SEP-2577)" in roots["text"]
    assert "“First revision released on or after 2027-07-28”\n→ 2027-09-28 (projected)" in roots["text"]
    assert "After: Deprecated" in roots["text"] and "→ 2028-03-28 (projected)" in roots["text"]
    assert roots["blocks"][0]["text"]["text"] == "Spec: earliest removal of Roots changed"
    fields = roots["blocks"][2]["fields"]
    assert fields[0]["text"].startswith("*Before*\n") and "2027-09-28" in fields[0]["text"]
    assert fields[1]["text"].startswith("*After*\n") and "2028-03-28" in fields[1]["text"]
    logging = next(n for n in sent if n["team"] == "infra" and n["kind"] == "spec-moved-to-removed")
    assert "Before: Deprecated" in logging["text"] and "After: Removed" in logging["text"]
    gone = next(n for n in sent if n["kind"] == "spec-deprecation-gone")
    assert "restored" in gone["text"] and "After: not listed" in gone["text"]
    rc = next(n for n in sent if n["kind"] == "spec-new-rc")
    assert "Current: revision 2026-07-28" in rc["text"] and "After: release candidate 2027-03-30-RC" in rc["text"]

    # A restart (new Store on the same file) sees nothing new.
    store.close()
    store = Store(loaded.resolve(loaded.config.state))
    assert poll(loaded, store)["changes"] == []
    assert len(notices(store)) == 10

    # A crash after the notices were queued but before the new state was saved: the same changes are found
    # again and produce the same keys, so nothing is queued twice.
    for key, value in before_change.items():
        store.set_kv(key, value)
    replay = poll(loaded, store)
    assert len(replay["changes"]) == 5 and replay["notices"] == 0
    assert len(notices(store)) == 10 and len(store.events()) == 5


def test_a_broken_registry_alerts_operators_once_per_error_and_keeps_the_last_good_copy(gh, write_config):
    loaded, store = open_state(write_config, spec_config(gh, operators_channel="#ops"))
    poll(loaded, store)
    good = store.get_kv(KV_LAST_GOOD)

    gh.put_raw(REGISTRY_PATH, fixture("registry_broken_table.mdx"))
    broken = poll(loaded, store)
    assert broken["ok"] is False and broken["using_last_good"] is True
    assert broken["error"].startswith("cannot read the registry: http://127.0.0.1:")
    assert "no longer parses as a table" in broken["error"]
    assert broken["changes"] == [] and broken["rows"] == 6  # not "no deprecations"
    [alert] = notices(store)
    assert (alert["channel"], alert["team"], alert["kind"]) == ("#ops", "operators", "spec-registry-unreadable")
    assert "no longer parses as a table" in alert["text"]
    assert store.get_kv(KV_LAST_GOOD)["registry"] == good["registry"]

    assert poll(loaded, store)["notices"] == 0  # same error: not repeated
    gh.put_raw(REGISTRY_PATH, fixture("registry_renamed_column.mdx"))
    assert poll(loaded, store)["notices"] == 1  # a different error is news
    gh.fail_next("/raw/", status=500)
    down = poll(loaded, store)
    assert down["notices"] == 1 and "HTTP 500" in down["error"]

    gh.put_raw(REGISTRY_PATH, fixture("registry_today.mdx"))
    recovered = poll(loaded, store)
    assert recovered["ok"] is True and recovered["changes"] == []
    kinds = [n["kind"] for n in notices(store)]
    assert kinds == ["spec-registry-unreadable"] * 3 + ["spec-registry-recovered"]
    assert all(n["channel"] == "#ops" for n in notices(store))

    gh.put_raw(REGISTRY_PATH, fixture("registry_broken_table.mdx"))
    assert poll(loaded, store)["notices"] == 1  # broken again after recovery: a new episode, alerted again


def test_without_an_operators_channel_alerts_go_to_every_team_channel(gh, write_config):
    teams = [
        {"name": "books", "slack_channel": "#books-mcp"},
        {"name": "library", "slack_channel": "#books-mcp"},  # shares the channel: one alert there
        {"name": "quiet", "slack_channel": "#quiet", "spec_news": False},
    ]
    loaded, store = open_state(write_config, spec_config(gh, teams=teams))
    gh.put_raw(REGISTRY_PATH, fixture("registry_missing_column.mdx"))
    summary = poll(loaded, store)
    assert summary["ok"] is False and summary["baseline"] is False
    assert summary["note"] == "no registry yet: nothing to compare"
    assert sorted(n["channel"] for n in notices(store)) == ["#books-mcp", "#quiet"]
    assert all("'Migration path'" in n["text"] for n in notices(store))

    gh.put_raw(REGISTRY_PATH, fixture("registry_today.mdx"))
    first_good = poll(loaded, store)
    assert first_good["baseline"] is True
    assert [n["kind"] for n in notices(store)][-2:] == ["spec-registry-recovered"] * 2


def test_an_unknown_shape_is_announced_to_teams_and_alerted_to_operators_once(gh, write_config):
    loaded, store = open_state(write_config, spec_config(gh, operators_channel="#ops"))
    poll(loaded, store)
    text = fixture("registry_today.mdx").replace(
        "Three months after SEP-2596 reaches Final", "When the last client upgrades     ", 1
    )
    gh.put_raw(REGISTRY_PATH, text)
    summary = poll(loaded, store)
    assert summary["unresolved"] == ["HTTP+SSE transport"]
    [change] = summary["changes"]
    assert change["kind"] == "earliest-removal-changed"
    assert change["after"]["basis"] == "unknown shape: When the last client upgrades"
    [alert] = notices(store, "#ops")
    assert alert["kind"] == "spec-unresolved" and "unknown shape: When the last client upgrades" in alert["text"]
    team_notice = notices(store, "#books-mcp")[0]
    assert "→ unresolved: unknown shape: When the last client upgrades" in team_notice["text"]
    assert poll(loaded, store)["notices"] == 0


def test_a_sep_date_that_becomes_unknown_is_not_announced_as_a_change(gh, write_config):
    config = spec_config(gh, operators_channel="#ops")
    loaded, store = open_state(write_config, config)
    poll(loaded, store)
    # Without the override and without a SEP file on GitHub, HTTP+SSE cannot be computed for a while.
    loaded_without = load_config(write_config({**config, "spec": {**config["spec"], "sep_final": {}}}, "b.yaml"))
    lost = poll(loaded_without, store)
    assert lost["changes"] == [] and lost["unresolved"] == ["HTTP+SSE transport"]
    [alert] = notices(store)
    assert alert["channel"] == "#ops" and "SEP-2596: GitHub lookup failed" in alert["text"]
    assert "/contents/seps: HTTP 404 Not Found" in alert["text"]
    back = poll(loaded, store)
    assert back["changes"] == [] and back["unresolved"] == []
    assert len(notices(store)) == 1


def test_a_new_revision_is_announced_and_becomes_current(gh, write_config):
    loaded, store = open_state(write_config, spec_config(gh))
    poll(loaded, store)
    gh.set_releases(REPO, spec_releases(FakeGitHub.release("2027-03-30", "2027-03-30T16:00:00Z")))
    summary = poll(loaded, store, today="2027-04-01")
    assert summary["current_revision"] == "2027-03-30"
    [change] = [c for c in summary["changes"] if c["kind"] == "new-revision"]
    assert change["before"]["tag"] == "2026-07-28" and change["after"]["tag"] == "2027-03-30"
    texts = [n["text"] for n in notices(store) if n["kind"] == "spec-new-revision"]
    assert len(texts) == 2 and "Current before: revision 2026-07-28" in texts[0]


def test_unreadable_releases_alert_operators_and_keep_the_revisions_last_seen(gh, write_config):
    loaded, store = open_state(write_config, spec_config(gh, operators_channel="#ops"))
    poll(loaded, store)
    gh.fail_next(f"/repos/{REPO}/releases", status=502, times=2)
    summary = poll(loaded, store)
    assert summary["ok"] is True and "cannot read the spec releases" in summary["releases_error"]
    assert summary["current_revision"] == "2026-07-28"
    assert [n["kind"] for n in notices(store)] == ["spec-releases-unreadable"]
    poll(loaded, store)
    assert len(notices(store)) == 1


def test_a_registry_change_reaches_slack_once(gh, write_config, slack):
    loaded, store = open_state(write_config, spec_config(gh, operators_channel="#ops"))
    sink = WebApiSink(slack.token, SlackSettings(api_url=slack.api_url, retries=1, timeout_seconds=5), store)
    poll(loaded, store)
    assert deliver_outbox(store, sink).sent == []

    text = fixture("registry_today.mdx")
    gh.put_raw(REGISTRY_PATH, text.replace("after 2027-07-28   ", "after 2028-01-25   ", 1))  # Roots only
    poll(loaded, store)
    assert len(deliver_outbox(store, sink).sent) == 2
    store.close()
    store = Store(loaded.resolve(loaded.config.state))  # a restart
    poll(loaded, store)
    assert deliver_outbox(store, sink).sent == []
    assert sorted(m["channel"] for m in slack.messages) == sorted(
        [slack.channel_id("#books-mcp"), slack.channel_id("#infra-mcp")]
    )
    assert all(m["blocks"][0]["text"]["text"] == "Spec: earliest removal of Roots changed" for m in slack.messages)
