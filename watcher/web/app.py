"""The status pages' routes, rendered server-side with autoescaping Jinja2 templates. Every handler is a plain
function (Starlette runs it in its thread pool): reading SQLite and drawing the timeline block."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jinja2
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from watcher.web.access import COOKIE, Access, TokenGate, safe_next
from watcher.web.context import WebContext
from watcher.web.deprecations import collect_deprecations, timeline_png
from watcher.web.overview import STATES, collect_overview
from watcher.web.run_page import collect_run

HERE = Path(__file__).resolve().parent
# No script may run on these pages (there is none of ours), and nothing loads from elsewhere.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
LOGIN_BODY_LIMIT = 4096


def templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template, whatever its name: all text from servers and registries is escaped
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["STATES"] = STATES
    return env


def as_json(value: Any) -> Any:
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) and not isinstance(value, type) else value


class Pages:
    def __init__(self, ctx: WebContext, access: Access) -> None:
        self.ctx = ctx
        self.access = access
        self.env = templates()

    def render(self, name: str, status_code: int = 200, **values: Any) -> HTMLResponse:
        values.setdefault("signed_in", self.access.token is not None)
        html = self.env.get_template(name).render(**values)
        return HTMLResponse(html, status_code=status_code, headers=SECURITY_HEADERS)

    def index(self, request: Request) -> Response:
        return self.render("index.html", page="matrix", overview=collect_overview(self.ctx))

    def api_status(self, request: Request) -> Response:
        return JSONResponse(as_json(collect_overview(self.ctx)), headers={"Cache-Control": "no-store"})

    def run(self, request: Request) -> Response:
        run = collect_run(self.ctx, int(request.path_params["run_id"]))
        if run is None:
            return self.render("not_found.html", 404, page="run", what=f"run #{request.path_params['run_id']}")
        from watcher.slackapp.summary import run_section  # what was done from Slack about this run

        return self.render("run.html", page="run", run=run, slack=run_section(self.ctx.store, run.run_id))

    def deprecations(self, request: Request) -> Response:
        page = collect_deprecations(self.ctx, self.ctx.now().date())
        return self.render("deprecations.html", page="deprecations", deps=page)

    def timeline(self, request: Request) -> Response:
        png = timeline_png(self.ctx, self.ctx.now().date())
        return Response(png, media_type="image/png", headers={"Cache-Control": "no-store"})

    async def login(self, request: Request) -> Response:
        target = safe_next(request.query_params.get("next"))
        if self.access.token is None:
            return RedirectResponse(target, status_code=303)
        if request.method == "GET":
            return self.render("login.html", page="login", next=target, failed=False)
        body = await request.body()
        form = parse_qs(body[:LOGIN_BODY_LIMIT].decode("utf-8", errors="replace"))
        target = safe_next((form.get("next") or [target])[0])
        if not self.access.token_matches((form.get("token") or [""])[0].strip()):
            return self.render("login.html", 401, page="login", next=target, failed=True)
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            COOKIE,
            self.access.cookie_value,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            max_age=30 * 86400,
        )
        return response


def web_parts(ctx: WebContext, access: Access) -> tuple[list[BaseRoute], list[Middleware]]:
    """The routes and the middleware the service's HTTP app mounts beside /healthz, /readyz and /metrics."""
    pages = Pages(ctx, access)
    handlers: list[tuple[str, Callable[..., Any], list[str]]] = [
        ("/", pages.index, ["GET"]),
        ("/api/status", pages.api_status, ["GET"]),
        ("/runs/{run_id:int}", pages.run, ["GET"]),
        ("/deprecations", pages.deprecations, ["GET"]),
        ("/deprecations/timeline.png", pages.timeline, ["GET"]),
        ("/login", pages.login, ["GET", "POST"]),
    ]
    routes: list[BaseRoute] = [Route(path, handler, methods=methods) for path, handler, methods in handlers]
    routes.append(Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"))
    return routes, [Middleware(TokenGate, access=access)]
