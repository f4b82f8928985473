"""How Slack reaches the app: Socket Mode (an app-level token; no public URL) or HTTP at POST /slack/events on
the service's port, every request signed. Over HTTP the signature is Slack's v0 HMAC-SHA256 of
`v0:{timestamp}:{body}` with the signing secret, and the timestamp must be within five minutes of the service's
clock (watcher.core.clock); anything else is answered 401 and never reaches Bolt."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.request import BoltRequest
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.signature import Clock, SignatureVerifier
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from watcher.core import clock
from watcher.core.store import Store
from watcher.live import ConfigSource
from watcher.notify.settings import SlackCredentials
from watcher.ops.bodies import SLACK_EVENTS_LIMIT, read_body
from watcher.slackapp.app import build_app

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
RETRY_SECONDS = 30.0
"""How often a Socket Mode connection Slack refused at start is tried again."""


class _ServiceClock(Clock):
    """The signature window is judged on the service's clock (pinned in rehearsals and tests)."""

    def now(self) -> float:
        return clock.now().timestamp()


class EventsEndpoint:
    """POST /slack/events: verify, then hand the request to Bolt (which answers once the listener acks)."""

    def __init__(self, app: App, signing_secret: str) -> None:
        self.app = app
        self.verifier = SignatureVerifier(signing_secret, clock=_ServiceClock())

    async def handle(self, request: Request) -> Response:
        # Bounded before anything else: a signature is checked over the whole body, so it cannot come first.
        body = await read_body(request, SLACK_EVENTS_LIMIT)
        if not self._valid(body, dict(request.headers)):
            return PlainTextResponse("invalid signature or stale timestamp", status_code=401)
        bolt_request = BoltRequest(
            body=body.decode("utf-8", errors="replace"),
            query=request.url.query,
            headers={key: [value] for key, value in request.headers.items()},
        )
        answer = await run_in_threadpool(self.app.dispatch, bolt_request)
        headers = {k: v for k, v in answer.first_headers().items() if k.lower() != "content-length"}
        return Response(answer.body, status_code=answer.status, headers=headers)

    def _valid(self, body: bytes, headers: dict[str, str]) -> bool:
        timestamp = headers.get("x-slack-request-timestamp", "")
        signature = headers.get("x-slack-signature", "")
        if not timestamp.isdigit() or not signature.startswith("v0="):
            return False
        return self.verifier.is_valid(body=body, timestamp=timestamp, signature=signature)


class SlackApp:
    """The app and whichever ways in its secrets allow; nothing at all without them."""

    def __init__(
        self, source: ConfigSource, store: Store, credentials: SlackCredentials, on_change: Callable[[], None]
    ) -> None:
        self.credentials = credentials
        self.listeners = ThreadPoolExecutor(max_workers=10, thread_name_prefix="slack-action")
        self.app = build_app(source, store, credentials, on_change, self.listeners)
        self.socket: SocketModeHandler | None = None
        self.stopped = threading.Event()

    @property
    def modes(self) -> list[str]:
        found = []
        if self.credentials.app_token:
            found.append("Socket Mode")
        if self.credentials.signing_secret:
            found.append(f"HTTP at POST {EVENTS_PATH}")
        return found

    def routes(self) -> list[Route]:
        """The HTTP endpoint, when a signing secret is set."""
        if not self.credentials.signing_secret:
            return []
        endpoint = EventsEndpoint(self.app, self.credentials.signing_secret)
        return [Route(EVENTS_PATH, endpoint.handle, methods=["POST"])]

    def connect(self) -> None:
        """Open the Socket Mode connection when an app token is set. Slack refusing it or being away is
        logged and tried again in the background, never a failed start (slack-sdk reconnects after that)."""
        if not self.credentials.app_token:
            return
        self.socket = SocketModeHandler(self.app, self.credentials.app_token, ping_interval=30)
        if not self._try_connect():
            threading.Thread(target=self._keep_trying, name="slack-socket", daemon=True).start()

    def _try_connect(self) -> bool:
        socket = self.socket
        if socket is None:
            return True
        try:
            socket.connect()  # type: ignore[no-untyped-call]
        except (SlackClientError, OSError) as exc:
            reason = exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
            log.error("Slack Socket Mode: cannot connect (%s); trying again every %g s", reason, RETRY_SECONDS)
            return False
        return True

    def _keep_trying(self) -> None:
        while not self.stopped.wait(RETRY_SECONDS):
            if self._try_connect():
                log.info("Slack Socket Mode: connected")
                return

    def close(self) -> None:
        """Stop listening, then wait for the work of the clicks already acknowledged."""
        self.stopped.set()
        if self.socket is not None:
            self.socket.close()  # type: ignore[no-untyped-call]
            self.socket = None
        self.listeners.shutdown(wait=True)


def slack_app(
    source: ConfigSource, store: Store, credentials: SlackCredentials, on_change: Callable[[], None]
) -> SlackApp | None:
    """The Slack app when its secrets are there (a bot token and an app token or signing secret), else None.
    Given the service's live configuration, every click and command reads the one in force."""
    if not credentials.interactive:
        return None
    return SlackApp(source, store, credentials, on_change)


def describe(app: SlackApp | None) -> dict[str, Any]:
    return {"enabled": app is not None, "modes": app.modes if app else []}
