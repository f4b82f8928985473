"""Who may see the status pages: anyone on a loopback bind; a token holder elsewhere (bearer header or the
cookie `/login` sets), unless `http.public: true` says the pages are meant for everyone who can reach them.

`/healthz` and `/readyz` stay open for probes; `/metrics` follows `http.metrics_need_token`.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from watcher.core import vault
from watcher.core.errors import ConfigError
from watcher.web.settings import HttpEndpoint

COOKIE = "mcp_watcher_session"
PROBES = frozenset({"/healthz", "/readyz"})
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and the usual names of the loopback host; False for 0.0.0.0 and the rest."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Access:
    token: str | None
    """None: the pages are open (a loopback bind, or `http.public: true`)."""
    protect_metrics: bool

    def __repr__(self) -> str:  # never print the token, even by accident
        return f"Access(token={'set' if self.token else None}, protect_metrics={self.protect_metrics})"

    @property
    def cookie_value(self) -> str:
        """What the session cookie holds: derived from the token, so the cookie itself is not the token."""
        assert self.token is not None
        return hmac.new(self.token.encode(), b"mcp-watcher status pages", hashlib.sha256).hexdigest()

    def token_matches(self, candidate: str) -> bool:
        return self.token is not None and hmac.compare_digest(candidate.encode(), self.token.encode())

    def allows(self, request: Request) -> bool:
        if self.token is None:
            return True
        header = request.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and self.token_matches(value.strip()):
            return True
        cookie = request.cookies.get(COOKIE, "")
        return bool(cookie) and hmac.compare_digest(cookie.encode(), self.cookie_value.encode())


def page_token(endpoint: HttpEndpoint, environ: Mapping[str, str] | None = None) -> str | None:
    env = vault.environ() if environ is None else environ
    file = Path(endpoint.auth_token_file) if endpoint.auth_token_file else None
    try:
        return vault.read_token(endpoint.auth_token_env, file, env)
    except OSError as exc:
        reason = exc.strerror or exc
        raise ConfigError(f"http.auth_token_file: cannot read {endpoint.auth_token_file}: {reason}") from exc


def resolve_access(endpoint: HttpEndpoint, host: str | None = None, environ: dict[str, str] | None = None) -> Access:
    """The access rule for a bind on `host` (default: http.host). Raises ConfigError when the pages would be
    served to a network without a token and without `http.public: true`."""
    host = endpoint.host if host is None else host
    if is_loopback(host):
        return Access(None, False)
    token = page_token(endpoint, environ)
    if token:
        return Access(token, endpoint.metrics_need_token)
    if endpoint.public:
        return Access(None, False)
    raise ConfigError(
        f"http.host: {host!r} is not a loopback address, and the status pages show your servers and runs to "
        f"anyone who can reach it. Give them a token ({endpoint.auth_token_env or 'http.auth_token_env'} in the "
        "environment, or http.auth_token_file), or set http.public: true to serve them without one."
    )


class TokenGate:
    """ASGI middleware: every path but the probes, /login and the stylesheet needs the token (when one is set)."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    def open_path(self, path: str) -> bool:
        # /slack/events: every request there carries Slack's signature, checked by watcher.slackapp
        if path in PROBES or path in ("/login", "/slack/events") or path.startswith("/static/"):
            return True
        return path == "/metrics" and not self.access.protect_metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.access.token is None or self.open_path(scope["path"]):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if self.access.allows(request):
            await self.app(scope, receive, send)
            return
        response: Response
        if request.method == "GET" and "text/html" in request.headers.get("accept", ""):
            response = RedirectResponse(f"/login?next={request.url.path}", status_code=303)
        else:
            response = JSONResponse(
                {"error": "a token is required: send 'Authorization: Bearer TOKEN' or sign in at /login"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="mcp-watcher"'},
            )
        await response(scope, receive, send)


def safe_next(target: str | None) -> str:
    """Only a path of this site (never another host) is a place to go back to after /login."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"
