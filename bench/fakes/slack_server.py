"""A local server that speaks the parts of Slack's Web API that mcp-watcher uses.

The real ``slack-sdk`` client talks to it over loopback (``WebClient(base_url=fake.api_url)``).

    with FakeSlack(token="xoxb-test", channels=["#books-mcp"]) as slack:
        ...                                 # point the watcher at slack.api_url
        slack.messages                      # every chat.postMessage accepted, in order
        slack.fail_next("chat.postMessage", status=429, retry_after=1)   # then the next call works
        slack.fail_next("chat.postMessage", status=503, times=5)
        slack.fail_next("chat.postMessage", error="channel_not_found")  # HTTP 200, ok: false
        slack.slow_next("chat.postMessage", seconds=5)   # answers (and records) only after 5 s
        slack.fail_next("chat.postMessage", status=503, store_first=True)  # stores the message, then 503

Methods: auth.test, chat.postMessage (text, blocks, thread_ts, metadata), conversations.list, users.conversations,
conversations.history (with metadata), files.getUploadURLExternal, the upload URL itself,
files.completeUploadExternal. Also an incoming-webhook URL (``slack.webhook_url``).

For an interactive app: conversations.members (``members``, per channel name), usergroups.users.list
(``usergroups``), chat.postEphemeral and views.open (recorded in ``ephemerals`` and ``views``), response
URLs (``response_url()``; what the app sends there lands in ``responses``), and apps.connections.open
(with ``app_token``), answering a ``ws://127.0.0.1`` URL of a real WebSocket server
(``bench.fakes.slack_socket``) that carries Socket Mode envelopes: ``slack.socket.send(...)``.
Unknown channels answer ``channel_not_found``; a wrong token answers ``invalid_auth``.

Scopes and membership, as Slack documents them: every accepted Web API answer carries the token's scopes in
an ``x-oauth-scopes`` header (``scopes``; None: no header) and the method's in ``x-accepted-oauth-scopes``;
a method whose scope the token lacks answers ``missing_scope`` with ``needed`` and ``provided``.
users.conversations lists the channels the bot is a member of (``bot_channels``; None: all of them) of the
asked ``types`` (``private`` names the private ones), ``limit`` at a time (at most 999), paged by
``response_metadata.next_cursor``.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from bench.fakes.loopback import LoopbackServer
from bench.fakes.slack_socket import SocketModeServer

BOT_SCOPES = (
    "chat:write",
    "channels:read",
    "groups:read",
    "channels:history",
    "groups:history",
    "files:write",
    "usergroups:read",
    "commands",
)
"""What the app manifest (deploy/slack-app-manifest.yaml) grants: a fake token has them unless a test says."""
ACCEPTED_SCOPES = {
    "chat.postMessage": "chat:write",
    "conversations.list": "channels:read,groups:read,mpim:read,im:read",
    "users.conversations": "channels:read,groups:read,mpim:read,im:read",
    "conversations.members": "channels:read,groups:read,mpim:read,im:read",
    "conversations.history": "channels:history,groups:history,mpim:history,im:history",
    "conversations.replies": "channels:history,groups:history,mpim:history,im:history",
    "files.getUploadURLExternal": "files:write",
    "files.completeUploadExternal": "files:write",
    "usergroups.users.list": "usergroups:read",
}
"""x-accepted-oauth-scopes per method (Slack's method reference); methods that need none send it empty."""


@dataclass
class _Failure:
    status: int = 200
    error: str | None = None
    retry_after: int | None = None
    times: int = 1
    store_first: bool = False
    """Carry the call out (e.g. store the message), then answer the failure anyway."""


@dataclass
class FakeSlack(LoopbackServer):
    token: str = "xoxb-test-token"
    channels: list[str] = field(default_factory=lambda: ["#general"])
    messages: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    webhook_posts: list[dict[str, Any]] = field(default_factory=list)
    app_token: str = "xapp-test-app-token"
    members: dict[str, list[str]] = field(default_factory=dict)
    """Channel name → user ids (conversations.members)."""
    usergroups: dict[str, list[str]] = field(default_factory=dict)
    """User group id → user ids (usergroups.users.list)."""
    ephemerals: list[dict[str, Any]] = field(default_factory=list)
    views: list[dict[str, Any]] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)
    scopes: list[str] | None = field(default_factory=lambda: list(BOT_SCOPES))
    """The token's scopes, sent in every answer's x-oauth-scopes header (None: no header)."""
    bot_channels: list[str] | None = None
    """The channels the bot is a member of (users.conversations); None: every channel."""
    private: list[str] = field(default_factory=list)
    """The channels that are private (users.conversations `types=private_channel`)."""

    def __post_init__(self) -> None:
        self.socket = SocketModeServer()
        self._lock = threading.Lock()
        self._failures: dict[str, list[_Failure]] = {}
        self._delays: dict[str, list[float]] = {}
        self._uploads: dict[str, dict[str, Any]] = {}
        self._ts = 1_700_000_000
        self._ids = {name: f"C{index:08d}" for index, name in enumerate(self.channels, 1)}

    # --- addresses (start/stop come from LoopbackServer) ---------------------------------------------

    def start(self) -> FakeSlack:
        self.socket.start()
        return super().start()

    def stop(self) -> None:
        super().stop()
        self.socket.stop()

    def response_url(self, name: str = "r1") -> str:
        return f"{self.base}/response/{name}"

    @property
    def api_url(self) -> str:
        return f"{self.base}/api/"

    @property
    def webhook_url(self) -> str:
        return f"{self.base}/services/T000/B000/hook"

    def channel_id(self, name: str) -> str:
        return self._ids[name]

    def fail_next(
        self,
        method: str,
        *,
        status: int = 200,
        error: str | None = None,
        retry_after: int | None = None,
        times: int = 1,
        store_first: bool = False,
    ) -> None:
        with self._lock:
            self._failures.setdefault(method, []).append(_Failure(status, error, retry_after, times, store_first))

    def slow_next(self, method: str, seconds: float, times: int = 1) -> None:
        with self._lock:
            self._delays.setdefault(method, []).extend([seconds] * times)

    def heal(self) -> None:
        with self._lock:
            self._failures.clear()
            self._delays.clear()

    # --- request handling --------------------------------------------------------------------------

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        url = urlsplit(request.path)
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        if url.path.startswith("/services/"):
            self._webhook(request, raw)
            return
        if url.path.startswith("/upload/"):
            self._upload(request, url.path, raw)
            return
        if url.path.startswith("/response/"):
            with self._lock:
                self.responses.append({"url": url.path, **json.loads(raw or b"{}")})
            self._reply(request, 200, {"ok": True})
            return
        method = url.path.removeprefix("/api/")
        params: dict[str, Any] = dict(parse_qsl(url.query))
        ctype = request.headers.get("Content-Type", "")
        if raw and "json" in ctype:
            params.update(json.loads(raw))
        elif raw:
            params.update(dict(parse_qsl(raw.decode())))
        with self._lock:
            self.calls.append(method)
            failure = self._take_failure(method)
            delays = self._delays.get(method)
            delay = delays.pop(0) if delays else 0.0
        if delay:
            time.sleep(delay)  # the request is handled after the pause, even if the client has gone
        if failure is not None and failure.store_first:
            handler = getattr(self, "_api_" + method.replace(".", "_"), None)
            if handler is not None:
                handler(params)
        if failure is not None:
            headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else {}
            body = {"ok": False, "error": failure.error or ("ratelimited" if failure.status == 429 else "fatal_error")}
            self._reply(request, failure.status, body, headers)
            return
        expected = self.app_token if method == "apps.connections.open" else self.token
        if request.headers.get("Authorization") != f"Bearer {expected}":
            self._reply(request, 200, {"ok": False, "error": "invalid_auth"})
            return
        handler = getattr(self, "_api_" + method.replace(".", "_"), None)
        if handler is None:
            self._reply(request, 200, {"ok": False, "error": "unknown_method"})
            return
        accepted = ACCEPTED_SCOPES.get(method, "")
        headers = {"x-accepted-oauth-scopes": accepted}
        if self.scopes is not None:
            headers["x-oauth-scopes"] = ",".join(self.scopes)
        self._reply(request, 200, handler(params), headers)

    def _take_failure(self, method: str) -> _Failure | None:
        queue = self._failures.get(method)
        if not queue:
            return None
        failure = queue[0]
        failure.times -= 1
        if failure.times <= 0:
            queue.pop(0)
        return failure

    def _reply(
        self, request: BaseHTTPRequestHandler, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(body).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json; charset=utf-8")
        request.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            request.send_header(key, value)
        request.end_headers()
        request.wfile.write(data)

    def _resolve(self, channel: str) -> str | None:
        if channel in self._ids:
            return self._ids[channel]
        if channel in self._ids.values():
            return channel
        return None

    def _next_ts(self) -> str:
        with self._lock:
            self._ts += 1
            return f"{self._ts}.000100"

    # --- Web API methods -----------------------------------------------------------------------------

    def _api_auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": f"{self.base}/",
            "team": "Fake",
            "user": "mcp-watcher",
            "team_id": "T00000001",
            "user_id": "U00000001",
            "bot_id": "B1",
        }

    def _api_chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._resolve(str(params.get("channel", "")))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        if not params.get("text") and not params.get("blocks"):
            return {"ok": False, "error": "no_text"}
        blocks = params.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        if blocks is not None and len(blocks) > 50:
            return {"ok": False, "error": "invalid_blocks"}
        metadata = params.get("metadata")
        if isinstance(metadata, str):
            metadata = json.loads(metadata)
        message = {
            "channel": channel,
            "ts": self._next_ts(),
            "text": params.get("text"),
            "blocks": blocks,
            "thread_ts": params.get("thread_ts"),
            "metadata": metadata,
        }
        if message["thread_ts"] and not any(m["ts"] == message["thread_ts"] for m in self.messages):
            return {"ok": False, "error": "thread_not_found"}
        with self._lock:
            self.messages.append(message)
        return {"ok": True, "channel": channel, "ts": message["ts"], "message": {"text": message["text"]}}

    def _api_apps_connections_open(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": self.socket.url()}

    def _api_conversations_members(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._resolve(str(params.get("channel", "")))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        name = next(n for n, cid in self._ids.items() if cid == channel)
        return {"ok": True, "members": self.members.get(name, []), "response_metadata": {"next_cursor": ""}}

    def _api_usergroups_users_list(self, params: dict[str, Any]) -> dict[str, Any]:
        group = str(params.get("usergroup", ""))
        if group not in self.usergroups:
            return {"ok": False, "error": "no_such_subteam"}
        return {"ok": True, "users": self.usergroups[group]}

    def _api_chat_postEphemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._resolve(str(params.get("channel", "")))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        with self._lock:
            self.ephemerals.append({"channel": channel, "user": params.get("user"), "text": params.get("text")})
        return {"ok": True, "message_ts": self._next_ts()}

    def _api_views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        view = params.get("view")
        if isinstance(view, str):
            view = json.loads(view)
        if not params.get("trigger_id") or not isinstance(view, dict):
            return {"ok": False, "error": "invalid_arguments"}
        with self._lock:
            number = len(self.views) + 1
            opened = {**view, "id": f"V{number:08d}", "hash": f"{number}.abc", "trigger_id": params["trigger_id"]}
            self.views.append(opened)
        return {"ok": True, "view": opened}

    def _api_conversations_list(self, params: dict[str, Any]) -> dict[str, Any]:
        chans = [{"id": cid, "name": name.lstrip("#")} for name, cid in self._ids.items()]
        return {"ok": True, "channels": chans, "response_metadata": {"next_cursor": ""}}

    def _api_users_conversations(self, params: dict[str, Any]) -> dict[str, Any]:
        types = str(params.get("types") or "public_channel").split(",")
        for kind, scope in (("public_channel", "channels:read"), ("private_channel", "groups:read")):
            if kind in types and self.scopes is not None and scope not in self.scopes:
                return {"ok": False, "error": "missing_scope", "needed": scope, "provided": ",".join(self.scopes)}
        limit = min(int(params.get("limit") or 100), 999)
        member = self.bot_channels if self.bot_channels is not None else list(self._ids)
        listed = [
            {"id": self._ids[name], "name": name.lstrip("#"), "is_private": name in self.private}
            for name in self._ids
            if name in member and ("private_channel" if name in self.private else "public_channel") in types
        ]
        start = int(str(params.get("cursor") or "offset:0").split(":", 1)[1])
        page = listed[start : start + limit]
        more = start + limit < len(listed)
        return {
            "ok": True,
            "channels": page,
            "response_metadata": {"next_cursor": f"offset:{start + limit}" if more else ""},
        }

    def _api_conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._resolve(str(params.get("channel", "")))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        include_metadata = str(params.get("include_all_metadata", "")).lower() in ("1", "true")
        found = []
        for message in reversed(self.messages):
            if message["channel"] != channel or message["thread_ts"]:
                continue
            item = {"type": "message", "ts": message["ts"], "text": message["text"]}
            if include_metadata and message["metadata"]:
                item["metadata"] = message["metadata"]
            found.append(item)
        limit = int(params.get("limit", 100))
        return {"ok": True, "messages": found[:limit], "has_more": False}

    def _api_conversations_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._resolve(str(params.get("channel", "")))
        ts = params.get("ts")
        include_metadata = str(params.get("include_all_metadata", "")).lower() in ("1", "true")
        found = []
        for message in self.messages:
            if message["channel"] == channel and (message["ts"] == ts or message["thread_ts"] == ts):
                item = {"type": "message", "ts": message["ts"], "text": message["text"]}
                if include_metadata and message["metadata"]:
                    item["metadata"] = message["metadata"]
                found.append(item)
        return {"ok": True, "messages": found, "has_more": False}

    def _api_files_getUploadURLExternal(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = f"F{len(self._uploads) + 1:08d}"
        self._uploads[file_id] = {"filename": params.get("filename"), "length": int(params.get("length", 0))}
        return {"ok": True, "upload_url": f"{self.base}/upload/{file_id}", "file_id": file_id}

    def _upload(self, request: BaseHTTPRequestHandler, path: str, raw: bytes) -> None:
        file_id = path.rsplit("/", 1)[-1]
        if file_id not in self._uploads:
            self._reply(request, 404, {"ok": False})
            return
        self._uploads[file_id]["content"] = raw
        request.send_response(200)
        request.send_header("Content-Length", "2")
        request.end_headers()
        request.wfile.write(b"OK")

    def _api_files_completeUploadExternal(self, params: dict[str, Any]) -> dict[str, Any]:
        files = params.get("files")
        if isinstance(files, str):
            files = json.loads(files)
        channel = params.get("channel_id")
        if channel is not None and self._resolve(channel) is None:
            return {"ok": False, "error": "channel_not_found"}
        done = []
        for item in files or []:
            upload = self._uploads.get(item["id"])
            if upload is None or "content" not in upload:
                return {"ok": False, "error": "file_not_found"}
            record = {
                "id": item["id"],
                "title": item.get("title"),
                "filename": upload["filename"],
                "content": upload["content"],
                "channel": self._resolve(channel) if channel else None,
                "thread_ts": params.get("thread_ts"),
                "initial_comment": params.get("initial_comment"),
            }
            with self._lock:
                self.files.append(record)
            done.append({"id": item["id"], "title": item.get("title")})
        return {"ok": True, "files": done}

    def _webhook(self, request: BaseHTTPRequestHandler, raw: bytes) -> None:
        with self._lock:
            self.calls.append("webhook")
            failure = self._take_failure("webhook")
        if failure is not None:
            headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else {}
            data = (failure.error or "rate_limited").encode()
            request.send_response(failure.status if failure.status != 200 else 400)
            for key, value in headers.items():
                request.send_header(key, value)
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            request.wfile.write(data)
            return
        with self._lock:
            self.webhook_posts.append(json.loads(raw or b"{}"))
        request.send_response(200)
        request.send_header("Content-Length", "2")
        request.end_headers()
        request.wfile.write(b"ok")


def wait_for(predicate: Any, timeout: float = 10.0, interval: float = 0.05) -> bool:
    """Poll predicate() until it is true or the timeout passes; returns its last truthiness."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
