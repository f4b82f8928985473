"""The status pages' routes, rendered server-side with autoescaping Jinja2 templates. Every handler is a plain
function (Starlette runs it in its thread pool): reading SQLite and drawing the timeline block."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import parse_qs

import jinja2
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from watcher.clusters.view import collect_clusters
from watcher.ops.bodies import LOGIN_LIMIT, read_body
from watcher.web.access import COOKIE, Access, TokenGate, safe_next
from watcher.web.backtests import backtest_routes
from watcher.web.cells import row_cells
from watcher.web.context import WebContext
from watcher.web.deprecations import collect_deprecations, timeline_png
from watcher.web.overview import STATES, Overview, SourceStatus, collect_overview
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


def templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template, whatever its name: all text from servers and registries is escaped
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["STATES"] = STATES
    env.globals["row_cells"] = row_cells
    return env


def package_files_check() -> list[str]:
    """The start-up check's line on the pages' files in the installed package: every template parses and the
    stylesheet is there (a package built without its data files fails `run --check`, not its first request)."""
    missing = [p for p in (HERE / "static" / "style.css", HERE / "templates" / "index.html") if not p.is_file()]
    if missing:
        return [f"FAIL: the installed package lacks {', '.join(map(str, missing))} (package data)"]
    env = templates()
    for name in env.list_templates():
        env.get_template(name)  # parses every template: a broken or missing file fails here
    return [f"pages' files: {len(env.list_templates())} templates and the stylesheet in {HERE}"]


def as_json(value: Any) -> Any:
    """A page's data as plain JSON values: dataclasses field by field (a source's status as `/api/status` shows
    it, `SourceStatus.as_json`), the rest as `dataclasses.asdict` gives it."""
    if isinstance(value, SourceStatus):
        return value.as_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: as_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [as_json(v) for v in value]
    if isinstance(value, tuple):
        return tuple(as_json(v) for v in value)
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value


CHUNK = 1 << 18
"""Bytes per piece of a streamed response: each piece costs a hop to Starlette's thread pool."""


def stream_overview(overview: Overview) -> Iterator[bytes]:
    """`/api/status`'s JSON (`overview_json`) in pieces of about `CHUNK` bytes."""
    pieces: list[bytes] = []
    size = 0
    for piece in overview_json(overview):
        pieces.append(piece)
        size += len(piece)
        if size >= CHUNK:
            yield b"".join(pieces)
            pieces, size = [], 0
    yield b"".join(pieces)


def overview_json(overview: Overview) -> Iterator[bytes]:
    """`/api/status` as JSON, written as it goes: everything but the matrices in one piece, then one server's
    row at a time (a thousand servers are never one string in memory). The same object `as_json` would give;
    each distinct text of the cells is encoded once (a matrix repeats its versions, ages and triggers)."""
    encoded = functools.lru_cache(maxsize=None)(lambda value: json.dumps(value, ensure_ascii=False))
    head = {f.name: as_json(getattr(overview, f.name)) for f in dataclasses.fields(overview) if f.name != "matrices"}
    yield json.dumps(head, ensure_ascii=False)[:-1].encode() + b', "matrices": ['
    for i, matrix in enumerate(overview.matrices):
        top = {
            "sdk": matrix.sdk,
            "registry": matrix.registry,
            "package": matrix.package,
            "columns": [dataclasses.asdict(c) for c in matrix.columns],
        }
        yield (b", " if i else b"") + json.dumps(top, ensure_ascii=False)[:-1].encode() + b', "teams": ['
        for j, team in enumerate(matrix.teams):
            yield (b", " if j else b"") + f'{{"team": {encoded(team.team)}, "servers": ['.encode()
            for k, row in enumerate(team.servers):
                cells = ", ".join(
                    f'{{"version": {encoded(c.version)}, "state": "{c.state}", '
                    f'"run_id": {"null" if c.run_id is None else c.run_id}, "age": {encoded(c.age)}, '
                    f'"at": {encoded(c.at)}, "trigger": {encoded(c.trigger)}}}'
                    for c in row.cells
                )
                line = f'{{"server": {encoded(row.server)}, "team": {encoded(row.team)}, "cells": [{cells}]}}'
                yield (b", " if k else b"") + line.encode()
            yield b"]}"
        yield b"]}"
    yield b"]}"


class Selection(TypedDict):
    team: str | None
    query: str


def _selection(request: Request) -> Selection:
    """The view's team filter and server search from the query string (empty: every server)."""
    team = (request.query_params.get("team") or "").strip() or None
    return Selection(team=team, query=(request.query_params.get("q") or "")[:200])


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
        overview = collect_overview(self.ctx, **_selection(request))
        return self.render("index.html", page="matrix", overview=overview)

    def api_status(self, request: Request) -> Response:
        overview = collect_overview(self.ctx, **_selection(request), fold=False)
        return StreamingResponse(
            stream_overview(overview), media_type="application/json", headers={"Cache-Control": "no-store"}
        )

    def run(self, request: Request) -> Response:
        run = collect_run(self.ctx, int(request.path_params["run_id"]))
        if run is None:
            return self.render("not_found.html", 404, page="run", what=f"run #{request.path_params['run_id']}")
        from watcher.slackapp.summary import run_section  # what was done from Slack about this run

        return self.render("run.html", page="run", run=run, slack=run_section(self.ctx.store, run.run_id))

    def clusters(self, request: Request) -> Response:
        team = (request.query_params.get("team") or "").strip() or None
        found = collect_clusters(self.ctx.loaded.config, self.ctx.store, team=team)
        return self.render("clusters.html", page="clusters", clusters=found, team=team)

    def deprecations(self, request: Request) -> Response:
        page = collect_deprecations(self.ctx, self.ctx.now().date())
        return self.render("deprecations.html", page="deprecations", deps=page)

    def readiness(self, request: Request) -> Response:
        from watcher.readiness.view import collect_readiness

        today = self.ctx.now().date()
        revisions = collect_readiness(self.ctx.loaded.config, self.ctx.store, today)
        return self.render("readiness.html", page="readiness", revisions=revisions, today=today.isoformat())

    def timeline(self, request: Request) -> Response:
        png = timeline_png(self.ctx, self.ctx.now().date())
        return Response(png, media_type="image/png", headers={"Cache-Control": "no-store"})

    async def login(self, request: Request) -> Response:
        target = safe_next(request.query_params.get("next"))
        if self.access.token is None:
            return RedirectResponse(target, status_code=303)
        if request.method == "GET":
            return self.render("login.html", page="login", next=target, failed=False)
        body = await read_body(request, LOGIN_LIMIT)
        form = parse_qs(body.decode("utf-8", errors="replace"))
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


def page_url(host: str, port: int | None) -> str:
    """The status page's address for the start-up log: what to open in a browser."""
    if host in ("", "0.0.0.0", "::"):
        return f"http://localhost:{port}/ (listening on every address)"
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def web_parts(ctx: WebContext, access: Access) -> tuple[list[BaseRoute], list[Middleware]]:
    """The routes and the middleware the service's HTTP app mounts beside /healthz, /readyz and /metrics."""
    pages = Pages(ctx, access)
    handlers: list[tuple[str, Callable[..., Any], list[str]]] = [
        ("/", pages.index, ["GET"]),
        ("/api/status", pages.api_status, ["GET"]),
        ("/runs/{run_id:int}", pages.run, ["GET"]),
        ("/clusters", pages.clusters, ["GET"]),
        ("/deprecations", pages.deprecations, ["GET"]),
        ("/deprecations/timeline.png", pages.timeline, ["GET"]),
        ("/readiness", pages.readiness, ["GET"]),
        ("/login", pages.login, ["GET", "POST"]),
    ]
    routes: list[BaseRoute] = [Route(path, handler, methods=methods) for path, handler, methods in handlers]
    routes += backtest_routes(ctx, pages.render)
    routes.append(Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"))
    return routes, [Middleware(TokenGate, access=access)]
