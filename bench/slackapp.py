"""A watcher with the Slack app against the loopback Slack: a beta's alert and a suite result really posted
(through the outbox, to the fake), and Slack's side of a click as signed HTTP requests. Here (not in tests/)
because bench/bench_slack_ack.py drives it too; tests/slackapp/helpers.py adds the tests' own helpers."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import yaml
from starlette.middleware import Middleware

from bench.fakes.slack_server import FakeSlack, wait_for
from watcher.config import LoadedConfig, parse_config
from watcher.core import clock
from watcher.core.store import Store
from watcher.core.timefmt import utcnow
from watcher.notify.delivery import WebApiSink, deliver_outbox
from watcher.notify.settings import SlackCredentials
from watcher.ops.health import HttpServer, Readiness, build_app
from watcher.polling.poll import _notify_teams
from watcher.sources.events import ReleaseEvent
from watcher.suites.notices import result_notice

CLOCK_START = "2026-12-03T12:00:00Z"
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
SERVER, SDK, PACKAGE, VERSION = "books-server", "python", "mcp", "2.4.0b1"
MEMBER, OUTSIDER, GROUPIE = "U0MEMBER", "U0OUTSIDER", "U0GROUPIE"
PAGE_TOKEN = "page-token-for-the-test"

CHANGES = [
    {
        "rule": "tool_removed",
        "list": "tools",
        "name": "search_books",
        "kind": "tool removed",
        "breaksClients": True,
        "affectsModels": True,
        "era": "modern",
    },
    {
        "rule": "required_parameter_added",
        "list": "tools",
        "name": "get_book",
        "path": "inputSchema.properties.isbn",
        "kind": "required parameter added",
        "breaksClients": True,
        "affectsModels": False,
        "era": "modern",
    },
]


def config_text(state: Path, public_url: str | None = "https://watcher.example.org") -> str:
    data: dict[str, Any] = {
        "state": str(state),
        "sdks": [{"name": SDK, "registry": "pypi", "package": PACKAGE}],
        "teams": [
            {"name": "books", "slack_channel": "#books-mcp", "slack_usergroup": "S0BOOKS"},
            {"name": "infra", "slack_channel": "#infra-mcp"},
        ],
        "servers": [
            {
                "name": SERVER,
                "team": "books",
                "sdk": SDK,
                "language": "python",
                "path": "no-such-folder",  # a run fails fast (no install), as a real run of a moved project
                "start": ["python", "server.py"],
                "baseline_sdk_version": "2.3.0",
            }
        ],
        "http": {"public_url": public_url} if public_url else {},
    }
    return yaml.safe_dump(data, sort_keys=False)


@contextmanager
def pinned_clock(monkeypatch: Any, start: str = CLOCK_START) -> Iterator[None]:
    monkeypatch.setenv(clock.START_VARIABLE, start)
    clock._offset.cache_clear()
    try:
        yield
    finally:
        monkeypatch.delenv(clock.START_VARIABLE, raising=False)
        clock._offset.cache_clear()


def sign(body: str, timestamp: int, secret: str = SECRET) -> str:
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return f"v0={digest}"


@dataclass
class Watcher:
    """The watcher's side: config, state, the Slack app and (for HTTP) the service's HTTP app."""

    loaded: LoadedConfig
    store: Store
    slack: FakeSlack
    credentials: SlackCredentials
    app: Any  # watcher.slackapp.connect.SlackApp
    http: HttpServer | None = None

    def deliver(self) -> None:
        deliver_outbox(self.store, WebApiSink(self.slack.token, self.loaded.config.slack, self.store))

    @property
    def url(self) -> str:
        assert self.http is not None and self.http.port is not None
        return f"http://127.0.0.1:{self.http.port}/slack/events"

    def post(self, body: str, *, timestamp: int | None = None, signature: str | None = None, **headers: str) -> Any:
        moment = int(clock.now().timestamp()) if timestamp is None else timestamp
        sent = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": str(moment),
            "X-Slack-Signature": signature if signature is not None else sign(body, moment),
            **headers,
        }
        return httpx.post(self.url, content=body.encode(), headers=sent, timeout=10)

    # --- what Slack shows ---------------------------------------------------------------------------------

    def message(self, kind: str) -> dict[str, Any]:
        """The posted message of an outbox row of this kind (the first one)."""
        rows = list(self.store.db.query("select * from outbox where kind = ? order by id", [kind]))
        assert rows, f"no {kind} notice"
        ts = rows[0]["slack_ts"]
        return next(m for m in self.slack.messages if m["ts"] == ts)

    def replies(self, kind: str = "slack_action") -> list[dict[str, Any]]:
        stamps = {r["slack_ts"] for r in self.store.db.query("select slack_ts from outbox where kind = ?", [kind])}
        return [m for m in self.slack.messages if m["ts"] in stamps]

    def wait_replies(self, count: int, kind: str = "slack_action") -> list[dict[str, Any]]:
        assert wait_for(lambda: len(self.replies(kind)) >= count), f"{len(self.replies(kind))} {kind} replies"
        return self.replies(kind)

    def close(self) -> None:
        self.app.close()
        if self.http is not None:
            self.http.stop()
        self.store.close()


def start_watcher(
    tmp_path: Path, slack: FakeSlack, monkeypatch: Any, *, http: bool = True, socket: bool = False
) -> Watcher:
    """The watcher with a beta alert and a failed suite result (with two contract changes) in #books-mcp."""
    from watcher.slackapp.connect import slack_app

    slack.members = {"#books-mcp": [MEMBER], "#infra-mcp": [OUTSIDER]}
    slack.usergroups = {"S0BOOKS": [GROUPIE]}
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    if http:
        monkeypatch.setenv("SLACK_SIGNING_SECRET", SECRET)
    if socket:
        monkeypatch.setenv("SLACK_APP_TOKEN", slack.app_token)
    (tmp_path / "books").mkdir(exist_ok=True)
    path = tmp_path / "watcher.yaml"
    (tmp_path / "state").mkdir(exist_ok=True)
    path.write_text(config_text(tmp_path / "state" / "watcher.db"))
    config = parse_config(path.read_text(), str(path))
    config = config.model_copy(update={"slack": config.slack.model_copy(update={"api_url": slack.api_url})})
    loaded = LoadedConfig(config=config, path=path, base_dir=tmp_path)
    store = Store(loaded.resolve(config.state))
    credentials = SlackCredentials(
        token=slack.token, signing_secret=SECRET if http else None, app_token=slack.app_token if socket else None
    )
    seed_thread(loaded, store)
    watcher = Watcher(loaded, store, slack, credentials, app=None)
    watcher.deliver()
    watcher.app = slack_app(loaded, store, credentials, watcher.deliver)
    if http:
        from watcher.web.access import Access, TokenGate

        readiness = Readiness(store, 30, utcnow(), lambda: True)
        # The pages' token gate is on, as on a networked host: /slack/events answers to signatures only.
        gate = [Middleware(TokenGate, access=Access(PAGE_TOKEN, False))]
        watcher.http = HttpServer(build_app(readiness, watcher.app.routes(), gate), "127.0.0.1", 0)
        watcher.http.start()
    if socket:
        watcher.app.connect()
        assert slack.socket.wait_connected(), "the app did not open its Socket Mode connection"
    return watcher


def seed_thread(loaded: LoadedConfig, store: Store) -> None:
    """What a poll and a suite run leave behind: the beta's alert and the result in its thread, queued."""
    now = utcnow().isoformat()
    store.add_version(
        {
            "sdk": SDK,
            "registry": "pypi",
            "package": PACKAGE,
            "version": VERSION,
            "prerelease": 1,
            "yanked": 0,
            "published": now,
            "first_seen": now,
            "baseline": 0,
        }
    )
    release = ReleaseEvent(
        sdk=SDK,
        registry="pypi",
        package=PACKAGE,
        version=VERSION,
        prerelease=True,
        yanked=False,
        published=now,
        first_seen=now,
    )
    _notify_teams(store, loaded.config, release)
    store.queue_run(SERVER, SDK, VERSION, f"release:{SDK}:{VERSION}")
    run = store.claim_run()
    assert run is not None
    report = {
        "server": SERVER,
        "team": "books",
        "sdk": SDK,
        "sdk_package": PACKAGE,
        "sdk_version": VERSION,
        "baseline_sdk_version": "2.3.0",
        "verdict": "fail",
        "run_id": "20261203T114900Z-2.4.0b1-seed",  # the run folder's name, as the runner reports it
        "seconds": 41.0,
        "reasons": [{"verdict": "fail", "reason": "contract: 2 change(s) that break clients"}],
        "contract": {"baseline": "2.3.0", "candidate": VERSION, "changes": CHANGES, "accepted": []},
    }
    store.finish_run(run["id"], "fail", report, 41.0)
    store.enqueue(result_notice(loaded, report, run["id"]))


# --- Slack's side of a click ------------------------------------------------------------------------------------


def button(message: dict[str, Any], action_id: str) -> dict[str, Any]:
    for block in message["blocks"] or []:
        for element in block.get("elements", []) if block.get("type") == "actions" else []:
            if element["action_id"] == action_id:
                return dict(element)
    raise AssertionError(f"no {action_id} button on {message['text']!r}")


def click_payload(
    slack: FakeSlack, message: dict[str, Any], action_id: str, user: str, action_ts: str
) -> dict[str, Any]:
    """A block_actions payload as Slack sends it for a click on one of the message's buttons."""
    pressed = button(message, action_id)
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": "T1"},
        "api_app_id": "A1",
        "token": "legacy-verification-token",
        "container": {"type": "message", "message_ts": message["ts"], "channel_id": message["channel"]},
        "trigger_id": f"trigger-{action_ts}",
        "team": {"id": "T1", "domain": "fake"},
        "channel": {"id": message["channel"], "name": "books-mcp"},
        "message": {
            "type": "message",
            "ts": message["ts"],
            "thread_ts": message["thread_ts"],
            "text": message["text"],
            "blocks": message["blocks"],
        },
        "response_url": slack.response_url(f"{user}-{action_ts}"),
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "mcpw_actions",
                "value": pressed.get("value"),
                "text": pressed["text"],
                "action_ts": action_ts,
            }
        ],
    }


def form(payload: dict[str, Any]) -> str:
    return urlencode({"payload": json.dumps(payload)})
