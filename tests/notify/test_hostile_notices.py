"""Every kind of notice, hostile text in every outside field, sent to the loopback Slack by the real slack-sdk.

The kinds are taken from the notice-key registry (`keys.NOTICE_KINDS`); each has a case below that makes its
notices the way the service does (the same functions) with `HOSTILE` in everything that comes from
outside: versions and packages from a registry, a team file's error, a server's reasons and log tails, the
conformance suite's names and messages, the spec registry's text, Slack user names. The outbox delivers
them to the fake, and what the fake received is read: the hostile text is there (the mark: it did reach the
message), and none of it is live — no link, mention or Slack command of its making, no control character,
every mrkdwn text sent verbatim (so Slack does not link a bare address or `@here` itself).

A kind with no case fails here (and the registry itself is checked against every `Notice(...)` in the code),
as do the ephemeral answers and the slash command's echo.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import yaml

from bench.fakes.slack_server import FakeSlack, wait_for
from tests.helpers import ROOT
from watcher.config import LoadedConfig, parse_config
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.notify import keys
from watcher.notify.delivery import WebApiSink, deliver_outbox

HOSTILE = (
    "<https://evil.example/login|Action required: re-authorize mcp-watcher> <!channel> <!here> <@U0ATTACK> "
    "<#C0ATTACK> @here #general https://evil.example/bare &amp; \x1b]0;owned\x07\x1b[2J\u202e "
    "*bold* _it_ ~gone~ `tick` ```fence``` <script>alert(1)</script> <b onmouseover=alert(2)>html</b>"
)
"""What a registry, a team file, a server or a suite can put in a text: a disguised link, Slack commands,
words Slack would parse itself, an entity, terminal escapes and a bidi override, mrkdwn's formatting marks
and backticks (a code span of ours closed early), HTML."""
FORMATTING = "*bold* _it_ ~gone~ `tick` ```fence```"
"""Mrkdwn has no escape for its formatting marks (only `&`, `<`, `>` are entities): they reach Slack as the
characters they are and can restyle a line, never make a link, a mention or a command. The test reads them
back, so none is dropped or turned into something else on the way."""
WORD = "<https://evil.example/w|Re-authorize><!channel>"
"""The same in one word (a slash command's argument)."""
MARK = "evil.example"
"""Shows that hostile text reached a message (as text)."""
OUTSIDE_HOST = "evil.example"
"""Every address in the hostile text points there: a link to it is a link outside text made."""
SERVER, TEAM, CHANNEL = "books-server", "books", "#books-mcp"
NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)

_LINK = re.compile(r"<(https?://[^|>]*)(?:\|[^>]*)?>")
_COMMAND = re.compile(r"<[!@#]")
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_HTML = re.compile(r"<(?!https?://|mailto:)[^>]*>?")
"""Any `<` that does not open one of our links: a tag (`<script>`, `<b …>`) or a Slack entity of outside text."""


@dataclass
class World:
    tmp: Path
    loaded: LoadedConfig
    store: Store
    slack: FakeSlack


def _config(tmp: Path, slack: FakeSlack) -> LoadedConfig:
    data = {
        "state": str(tmp / "state" / "watcher.db"),
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
        "teams": [{"name": TEAM, "slack_channel": CHANNEL, "sdks": ["python"], "spec_news": True}],
        "servers": [
            {
                "name": SERVER,
                "team": TEAM,
                "sdk": "python",
                "language": "python",
                "path": "books",
                "start": ["python", "server.py"],
                "baseline_sdk_version": "2.3.0",
            }
        ],
        "slack": {"api_url": slack.api_url, "retries": 0},
        "http": {"public_url": "https://watcher.example.org"},
    }
    (tmp / "state").mkdir(exist_ok=True)
    (tmp / "books").mkdir(exist_ok=True)
    path = tmp / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return LoadedConfig(config=parse_config(path.read_text(), str(path)), path=path, base_dir=tmp)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with FakeSlack(token="xoxb-hostile-test", channels=[CHANNEL]) as slack:
        slack.members = {CHANNEL: ["U0MEMBER"]}
        loaded = _config(tmp_path, slack)
        store = Store(loaded.resolve(loaded.config.state))
        try:
            yield World(tmp_path, loaded, store, slack)
        finally:
            store.close()


# --- one case per kind: the service's own functions, outside text hostile --------------------------------


def _release(w: World) -> None:
    from watcher.polling.poll import _notify_teams
    from watcher.sources.events import ReleaseEvent

    release = ReleaseEvent(
        sdk="python",
        registry="pypi",
        package=HOSTILE,
        version=HOSTILE,
        prerelease=True,
        yanked=False,
        published=HOSTILE,
        first_seen=HOSTILE,
    )
    _notify_teams(w.store, w.loaded.config, release)


def suite_report() -> dict[str, Any]:
    return {
        "server": SERVER,
        "team": TEAM,
        "sdk": "python",
        "sdk_package": HOSTILE,
        "sdk_version": HOSTILE,
        "baseline_sdk_version": HOSTILE,
        "verdict": "fail",
        "run_id": HOSTILE,
        "seconds": 12.0,
        "reasons": [{"verdict": "fail", "reason": HOSTILE}],
        "install": {"ok": False, "error": HOSTILE, "evidence": HOSTILE},
        "conformance": [
            {
                "requirements": HOSTILE,
                "passed": 1,
                "failed": 1,
                "expected_failures": [],
                "unexpected_failures": [HOSTILE],
                "stale_entries": [HOSTILE],
                "failure_messages": {HOSTILE: HOSTILE},
                "unscored": [{"passed": False}],
            },
            {"requirements": HOSTILE, "error": HOSTILE},
            {"requirements": HOSTILE, "skipped": HOSTILE},
        ],
        "contract": {
            "baseline": HOSTILE,
            "changes": [
                {
                    "list": HOSTILE,
                    "name": HOSTILE,
                    "kind": HOSTILE,
                    "path": HOSTILE,
                    "era": HOSTILE,
                    "breaksClients": 1,
                },
                {"list": HOSTILE, "name": HOSTILE, "kind": HOSTILE, "affectsModels": True},
            ],
            "accepted": [{"list": HOSTILE, "name": HOSTILE, "accepted": {"expires": HOSTILE, "reason": HOSTILE}}],
        },
        "evaluation": {"note": HOSTILE},
        "deprecation_warnings": [{"kind": HOSTILE, "message": HOSTILE, "count": 3}],
        "source": {"commit": HOSTILE, "git": HOSTILE, "ref": HOSTILE},
        "actions": {"html_url": "https://evil.example/run|<!channel>"},
    }


def _suite_result(w: World) -> None:
    from watcher.suites.notices import result_notice

    report = suite_report()
    stored = w.store.record_run(SERVER, "python", HOSTILE, HOSTILE, report)
    w.store.enqueue(result_notice(w.loaded, report, stored))
    contract_error = {**report, "contract": {"error": HOSTILE}}
    w.store.enqueue(result_notice(w.loaded, {**contract_error, "sdk_version": "2.4.0b9"}, None))


def _evaluation_result(w: World) -> None:
    from watcher.evaluation.notices import evaluation_notice

    side = {"success_rate": 0.5, "tool_calls": 2, "input_tokens": 10, "output_tokens": 5, "tool_errors": 0}
    report = {
        "server": SERVER,
        "verdict": "regression",
        "provider": HOSTILE,
        "model": HOSTILE,
        "trials": 2,
        "candidate_version": HOSTILE,
        "baseline_version": HOSTILE,
        "regressed_tasks": [HOSTILE],
        "regressions": [HOSTILE],
        "error": HOSTILE,
        "partial": True,
        "not_measured": [{"task": HOSTILE, "trials": [1], "of": 2, "reason": HOSTILE}],
        "tasks": [{"id": HOSTILE, "regressed": True, "pairs": 1, "baseline": side, "candidate": side}],
    }
    w.store.enqueue(evaluation_notice(w.loaded, report))


def _digest(w: World) -> None:
    from tests.digest.helpers import DIGEST_NOW, TODAY, add_release, build_state
    from watcher.digest.build import build_digest
    from watcher.digest.notices import digest_notices

    state = build_state(w.tmp / "digest")
    add_release(state.store, "python", "pypi", "mcp", "2.4.0b2 " + HOSTILE, True, datetime(2026, 11, 27, tzinfo=UTC))
    digest = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW)
    picture = w.tmp / "timeline.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n")
    for notice in digest_notices(digest, keys.weekly_digest(TEAM, "2026-W49"), picture):
        w.store.enqueue(Notice(notice.key, TEAM, CHANNEL, notice.kind, notice.text, notice.blocks, notice.thread_of))


_ROW = {
    "state": "deprecated",
    "deprecated_in": HOSTILE,
    "sep": HOSTILE,
    "earliest_removal_text": HOSTILE,
    "earliest_removal": None,
    "basis": HOSTILE,
    "migration": HOSTILE,
    "resolved": False,
}
_REVISION = {"tag": HOSTILE, "prerelease": True, "released": HOSTILE, "revision": HOSTILE}


def _spec_change(kind: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        from watcher.spec.notices import Change
        from watcher.spec.watch import _announce

        values = _REVISION if kind in ("new-rc", "new-revision") else _ROW
        _announce(w.store, w.loaded.config, Change(kind, HOSTILE, values, values, f"spec:{kind}:{kind}"))

    return case


def _spec_source(source: str, recovered: bool) -> Callable[[World], None]:
    def case(w: World) -> None:
        from watcher.spec.watch import _source_health

        _source_health(w.store, w.loaded.config, source, HOSTILE)
        if recovered:
            _source_health(w.store, w.loaded.config, source, None)

    return case


def _spec_unresolved(w: World) -> None:
    from watcher.spec.watch import _unresolved_alerts

    row = {"resolved": False, "key": "k", "earliest_removal_text": HOSTILE, "basis": HOSTILE, "feature": HOSTILE}
    _unresolved_alerts(w.store, w.loaded.config, [{**row, "shape": HOSTILE}])


def _source_health(w: World) -> None:
    from watcher.polling.alerts import Outage, _alert, _down_text

    outage = Outage("python", datetime(2026, 12, 3, 6, 0, tzinfo=UTC), HOSTILE, None)
    _alert(w.store, w.loaded.config, keys.source_down("python", "2026-12-03T06:00:00Z"), _down_text(outage, NOW))


def _repo_state() -> Any:
    from watcher.repos.sync import RepoState

    server = {
        "name": HOSTILE,
        "language": HOSTILE,
        "sdk": HOSTILE,
        "sdk_package": HOSTILE,
        "baseline_sdk_version": HOSTILE,
        "requirements": [HOSTILE],
    }
    return RepoState(
        git="https://github.com/acme/books.git",
        team=TEAM,
        ref=HOSTILE,
        commit="0123456789abcdef0123",
        servers=[server],
        detections={HOSTILE: {"manifest": HOSTILE, "language": HOSTILE}},
        overridden={HOSTILE: [HOSTILE]},
        error=HOSTILE,
        error_commit="fedcba9876543210fedc",
    )


def _repo_config_error(w: World) -> None:
    from watcher.repos.sync import queue_error_notices

    assert queue_error_notices(w.loaded, w.store, [_repo_state()])


def _repo_onboarding(w: World) -> None:
    from watcher.repos.onboarding import onboarding_text

    state = _repo_state()
    verdicts = {HOSTILE: {"verdict": HOSTILE, "report": {"reasons": [{"reason": HOSTILE}], "contract": {}}}}
    text, blocks = onboarding_text(state, verdicts)
    w.store.enqueue(Notice(keys.repo_onboarding(state.git, TEAM), TEAM, CHANNEL, "repo-onboarding", text, blocks))


def _repo_proposal(w: World) -> None:
    from watcher.repos.proposal import Proposal, proposal_text

    found = {"language": HOSTILE, "package": HOSTILE, "version": HOSTILE, "manifest": HOSTILE, "specifier": HOSTILE}
    proposal = Proposal(HOSTILE, HOSTILE, found, [HOSTILE], "stdio", [[HOSTILE]], HOSTILE)
    text, blocks = proposal_text(_repo_state(), proposal)
    w.store.enqueue(Notice(keys.repo_proposal(HOSTILE, TEAM), TEAM, CHANNEL, "repo-proposal", text, blocks))


def _repo_unowned(w: World) -> None:
    from watcher.repos.discover import _KV, queue_unowned_notices

    w.store.set_kv(_KV, {"unowned": [{"repository": HOSTILE, "clone_url": HOSTILE, "why": HOSTILE}]})
    assert queue_unowned_notices(w.loaded.config, w.store)


def _server_onboarding(w: World) -> None:
    from watcher.serverset.welcome import Welcome, welcome_text

    found = {"manifest": HOSTILE, "language": HOSTILE, "specifier": HOSTILE, "resolved": HOSTILE}
    welcome = Welcome(HOSTILE, TEAM, HOSTILE, HOSTILE, HOSTILE, HOSTILE, found, [HOSTILE])
    server = _repo_state().servers[0]
    text, blocks = welcome_text(welcome, server, {"verdict": HOSTILE, "report": {"reasons": [{"reason": HOSTILE}]}})
    w.store.enqueue(
        Notice(keys.server_onboarding(HOSTILE, HOSTILE, TEAM), TEAM, CHANNEL, "server-onboarding", text, blocks)
    )


def _hostile_cluster() -> Any:
    from watcher.core.store_clusters import ClusterRow

    return ClusterRow(
        sdk="mcp", version=HOSTILE, signature=HOSTILE, rule=HOSTILE, summary=HOSTILE, parts=[HOSTILE],
        trace=HOSTILE, symbols=[HOSTILE], reproduction=HOSTILE, example_server=HOSTILE, first_seen=HOSTILE,
        crossed=None, notes=None, servers=[HOSTILE, HOSTILE], teams=[TEAM],
    )  # fmt: skip


def _cluster(w: World) -> None:
    from watcher.clusters.notices import team_reply
    from watcher.clusters.release_notes import NoteLine, NotesFinding

    notes = NotesFinding(True, (HOSTILE,), (NoteLine(HOSTILE, HOSTILE, "https://evil.example/x"),), (HOSTILE,))
    w.store.enqueue(team_reply(w.loaded, _hostile_cluster(), TEAM, notes))


def _cluster_upstream(w: World) -> None:
    from watcher.clusters.notices import operator_notices
    from watcher.clusters.upstream import UpstreamDraft

    notices = operator_notices(w.loaded, _hostile_cluster(), UpstreamDraft(HOSTILE, HOSTILE, False, HOSTILE))
    assert notices
    for notice in notices:
        w.store.enqueue(notice)


def _readiness(w: World) -> None:
    from watcher.readiness.notices import team_readiness_notice

    item = {"scenario": HOSTILE, "message": HOSTILE, "spec": ["https://evil.example/spec"]}
    entry = {"status": "to_fix", "to_fix": [item], "sdk_version": HOSTILE, "suite_version": HOSTILE}
    assert team_readiness_notice(w.store, w.loaded.config, TEAM, HOSTILE, HOSTILE, {HOSTILE: entry})


def _readiness_candidate(w: World) -> None:
    from watcher.readiness.notices import candidate_notice

    assert candidate_notice(w.store, w.loaded.config, HOSTILE, HOSTILE, HOSTILE, [HOSTILE, HOSTILE])


def _backtest(w: World) -> None:
    from watcher.backtest.history import Period, Replayed
    from watcher.backtest.notices import notice
    from watcher.backtest.replay import Slot, build_answer

    def replayed(version: str, day: str, pre: bool) -> Replayed:
        return Replayed(version, datetime.fromisoformat(day).replace(hour=9, tzinfo=UTC), pre, False, "2.x")

    report = {
        "verdict": "fail",
        "sdk_package": HOSTILE,
        "install": {"ok": True},
        "start": {"ok": True},
        "conformance": [{"requirements": HOSTILE, "unexpected_failures": [HOSTILE], "stale_entries": []}],
    }
    versions = [replayed("2.0.0a1 " + HOSTILE, "2026-06-11", True), replayed("2.0.0", "2026-07-28", False)]
    slots = [Slot(versions[0], 0, "k0", "fail", report), Slot(versions[1], 1, "k1", "fail", report)]
    server = w.loaded.config.server(SERVER)
    period = Period(versions, [], [HOSTILE])
    answer = build_answer(7, server, "pypi", HOSTILE, date(2026, 6, 1), date(2026, 12, 1), period, slots, "done")
    w.store.enqueue(notice(w.loaded, {**answer, "team": TEAM}))


def _slack_action(w: World) -> None:
    from slack_sdk import WebClient

    from watcher.decisions.records import Actor, Origin
    from watcher.slackapp.app import Interactions

    w.store.add_version(
        {
            "sdk": "python",
            "registry": "pypi",
            "package": "mcp",
            "version": WORD,
            "prerelease": 1,
            "yanked": 0,
            "published": NOW.isoformat(),
            "first_seen": NOW.isoformat(),
            "baseline": 0,
        }
    )
    told: list[str] = []
    work = Interactions(w.loaded, w.store, WebClient(token=w.slack.token, base_url=w.slack.api_url), lambda: None)
    actor = Actor("U0MEMBER", HOSTILE)
    run_id = work.rerun("delivery-1", actor, Origin(None, None), SERVER, WORD, told.append)
    assert run_id is not None, told


CASES: dict[str, Callable[[World], None]] = {
    "release": _release,
    "suite_result": _suite_result,
    "evaluation_result": _evaluation_result,
    "digest": _digest,
    **{f"spec-{kind}": _spec_change(kind) for kind in ("new-deprecation", "moved-to-removed")},
    **{f"spec-{kind}": _spec_change(kind) for kind in ("earliest-removal-changed", "deprecation-gone")},
    **{f"spec-{kind}": _spec_change(kind) for kind in ("new-rc", "new-revision")},
    **{f"spec-{s}-unreadable": _spec_source(s, recovered=False) for s in ("registry", "releases")},
    **{f"spec-{s}-recovered": _spec_source(s, recovered=True) for s in ("registry", "releases")},
    "spec-unresolved": _spec_unresolved,
    "source-health": _source_health,
    "repo-config-error": _repo_config_error,
    "repo-onboarding": _repo_onboarding,
    "repo-proposal": _repo_proposal,
    "repo-unowned": _repo_unowned,
    "server-onboarding": _server_onboarding,
    "cluster": _cluster,
    "cluster_upstream": _cluster_upstream,
    "readiness": _readiness,
    "readiness-candidate": _readiness_candidate,
    "backtest": _backtest,
    "slack_action": _slack_action,
}


def missing_cases(kinds: dict[str, str], cases: dict[str, Any]) -> list[str]:
    """Registered kinds with no hostile-text case (and cases for kinds no longer registered)."""
    return sorted(set(kinds) ^ set(cases))


def test_every_registered_kind_has_a_hostile_text_case():
    assert missing_cases(keys.NOTICE_KINDS, CASES) == []
    planted = {**keys.NOTICE_KINDS, "new-kind": "a kind someone added without a case"}
    assert missing_cases(planted, CASES) == ["new-kind"]


# --- what the fake received ---------------------------------------------------------------------------------


def _texts(value: Any, mrkdwn: list[dict[str, Any]], plain: list[str]) -> None:
    """Collect every mrkdwn text object and every plain_text string of Block Kit JSON."""
    if isinstance(value, list):
        for item in value:
            _texts(item, mrkdwn, plain)
    elif isinstance(value, dict):
        if value.get("type") == "mrkdwn":
            mrkdwn.append(value)
        elif value.get("type") == "plain_text":
            plain.append(str(value.get("text", "")))
        for key, item in value.items():
            if key != "text" or not isinstance(item, str):
                _texts(item, mrkdwn, plain)


def live_problems(text: str, blocks: list[dict[str, Any]] | None) -> list[str]:
    """What in one received message Slack would make live from outside text."""
    mrkdwn: list[dict[str, Any]] = []
    plain: list[str] = []
    _texts(blocks or [], mrkdwn, plain)
    found = []
    for where, value in [("text", text), *((f"block text {i}", m["text"]) for i, m in enumerate(mrkdwn))]:
        found += [f"{where}: a link to {url}" for url in _LINK.findall(value) if OUTSIDE_HOST in url]
        found += [f"{where}: a Slack command {m!r}" for m in _COMMAND.findall(value)]
        found += [f"{where}: a control character {c!r}" for c in _CONTROL.findall(value)]
        found += [f"{where}: HTML {m!r}" for m in _HTML.findall(value)]
    found += [f"mrkdwn not verbatim: {m['text'][:60]!r}" for m in mrkdwn if m.get("verbatim") is not True]
    for value in plain:
        found += [f"plain text: {m!r}" for m in re.findall(r"<[!@#h]", value)]
        found += [f"plain text: a control character {c!r}" for c in _CONTROL.findall(value)]
    return found


@pytest.mark.parametrize("kind", sorted(CASES))
def test_no_outside_text_is_live_in_any_notice(world: World, kind: str):
    CASES[kind](world)
    rows = list(world.store.db.query("select key from outbox where kind = ?", [kind]))
    assert rows, f"the {kind} case queued no {kind} notice"
    report = deliver_outbox(world.store, WebApiSink(world.slack.token, world.loaded.config.slack, world.store))
    assert not report.failed and not report.retry_later, report
    sent = {row["key"] for row in rows}
    received = [m for m in world.slack.messages if (m["metadata"] or {}).get("event_payload", {}).get("key") in sent]
    assert len(received) == len(sent), (len(received), sent)
    shown = "\n".join(m["text"] + json.dumps(m["blocks"]) for m in received)
    assert MARK in shown, f"no hostile text reached the {kind} notice: the case proves nothing"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in shown, f"{kind}: the HTML did not arrive as text"
    assert FORMATTING in shown, f"{kind}: mrkdwn's formatting marks did not arrive as they are"
    for message in received:
        problems = live_problems(message["text"], message["blocks"])
        assert not problems, f"{kind}: " + "; ".join(problems)


def test_the_checker_finds_what_it_looks_for():
    raw = {"type": "mrkdwn", "text": HOSTILE}
    problems = live_problems(HOSTILE, [{"type": "section", "text": raw}])
    assert any("a link to https://evil.example/login" in p for p in problems)
    assert any("a Slack command" in p for p in problems) and any("control character" in p for p in problems)
    assert any("not verbatim" in p for p in problems)
    assert any("HTML '<script>'" in p for p in problems) and any("HTML '<b onmouseover" in p for p in problems)
    ours = {"type": "mrkdwn", "text": "<https://github.com/acme/books/actions/runs/1|run &lt;x&gt;>", "verbatim": True}
    assert live_problems("fine", [{"type": "context", "elements": [ours]}]) == []


# --- ephemeral answers and the slash command's echo -----------------------------------------------------------


def _command(world: World, text: str, number: int) -> dict[str, Any]:
    """`/mcp-watcher <text>` through the real Bolt app; the answer Slack's response URL received."""
    from concurrent.futures import ThreadPoolExecutor

    from slack_bolt.request import BoltRequest

    from watcher.notify.settings import SlackCredentials
    from watcher.slackapp.app import build_app

    payload = {
        "token": "legacy",
        "team_id": "T1",
        "channel_id": world.slack.channel_id(CHANNEL),
        "user_id": "U0MEMBER",
        "user_name": "member",
        "command": "/mcp-watcher",
        "text": text,
        "response_url": world.slack.response_url(f"cmd-{number}"),
        "trigger_id": f"t{number}",
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        app = build_app(world.loaded, world.store, SlackCredentials(token=world.slack.token), lambda: None, pool)
        headers = {"content-type": ["application/x-www-form-urlencoded"]}
        answer = app.dispatch(BoltRequest(body=urlencode(payload), headers=headers))
        assert answer.status == 200
        assert wait_for(lambda: any(r["url"].endswith(f"cmd-{number}") for r in world.slack.responses))
    return next(r for r in world.slack.responses if r["url"].endswith(f"cmd-{number}"))


@pytest.mark.parametrize(
    "command", [f"status {WORD}", f"accepted {WORD}", f"rerun {WORD} 2.4.0b1", f"rerun {SERVER} {WORD}"]
)
def test_the_slash_commands_answers_echo_outside_words_escaped(world: World, command: str):
    response = _command(world, command, 1)
    shown = response["text"] + json.dumps(response.get("blocks"))
    assert "evil.example" in shown, response  # the words typed came back (escaped)
    assert response["response_type"] == "ephemeral"
    problems = live_problems(response["text"], response.get("blocks"))
    assert not problems, problems


# --- the registry against the code ----------------------------------------------------------------------------


def _kind_patterns() -> list[tuple[str, str]]:
    """(where, regex) of every kind a `Notice(...)` in the code can have, read with ast: a literal, a
    module constant, an f-string (its holes match anything), or a parameter of the enclosing function
    (then every call of that function in the code is read the same way)."""
    files = sorted((ROOT / "watcher").rglob("*.py"))
    trees = {path: ast.parse(path.read_text(encoding="utf-8"), str(path)) for path in files}
    module_of = {path: ".".join(path.relative_to(ROOT).with_suffix("").parts) for path in files}
    constants: dict[str, ast.expr] = {}
    defined_in: dict[ast.FunctionDef, str] = {}
    # Calls of a name in each module: a function's callers are in its own module or import it from there.
    calls: dict[tuple[str, str], list[ast.Call]] = {}
    imports: dict[str, dict[str, str]] = {}
    for path, tree in trees.items():
        module = module_of[path]
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                constants[node.targets[0].id] = node.value
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                defined_in[node] = module
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    imports.setdefault(module, {})[alias.asname or alias.name] = node.module
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                if name:
                    calls.setdefault((module, name), []).append(node)

    def callers(function: ast.FunctionDef) -> list[ast.Call]:
        home = defined_in[function]
        found = list(calls.get((home, function.name), []))
        for module, names in imports.items():
            if names.get(function.name) == home:
                found += calls.get((module, function.name), [])
        return found

    def argument(call: ast.Call, function: ast.FunctionDef, parameter: str) -> ast.expr | None:
        names = [a.arg for a in function.args.args]
        for keyword in call.keywords:
            if keyword.arg == parameter:
                return keyword.value
        index = names.index(parameter) - (1 if names and names[0] in ("self", "cls") else 0)
        return call.args[index] if index < len(call.args) else None

    def patterns(expr: ast.expr, scope: ast.FunctionDef | None, depth: int = 0) -> list[str]:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return [re.escape(expr.value)]
        if isinstance(expr, ast.JoinedStr):
            parts = [re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in expr.values]
            return ["".join(parts)]
        if isinstance(expr, ast.Name):
            if scope is not None and expr.id in [a.arg for a in scope.args.args] and depth < 3:
                found = []
                for call in callers(scope):
                    given = argument(call, scope, expr.id)
                    if given is not None:
                        found += patterns(given, _enclosing(call), depth + 1)
                return found
            if expr.id in constants:
                return patterns(constants[expr.id], None, depth + 1)
        raise AssertionError(f"a notice kind the registry test cannot read: {ast.dump(expr)}")

    parents: dict[ast.AST, ast.FunctionDef] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                for inner in ast.walk(node):
                    if inner is not node:
                        parents[inner] = node  # ast.walk goes outside in: the innermost function wins

    def _enclosing(node: ast.AST) -> ast.FunctionDef | None:
        return parents.get(node)

    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Notice":
                kind = next((k.value for k in node.keywords if k.arg == "kind"), None)
                kind = kind or (node.args[3] if len(node.args) > 3 else None)
                assert kind is not None, f"{path}:{node.lineno}: a Notice without a kind"
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found += [(where, p) for p in patterns(kind, _enclosing(node))]
    return found


def test_every_notice_in_the_code_has_a_registered_kind_and_every_registered_kind_is_made():
    found = _kind_patterns()
    assert len(found) >= 15
    unregistered = [f"{where}: {p}" for where, p in found if not any(re.fullmatch(p, k) for k in keys.NOTICE_KINDS)]
    assert not unregistered, "kinds missing from keys.NOTICE_KINDS:\n" + "\n".join(unregistered)
    unused = [k for k in keys.NOTICE_KINDS if not any(re.fullmatch(p, k) for _, p in found)]
    assert not unused, f"registered kinds no code makes: {unused}"
