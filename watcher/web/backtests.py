"""The backtest pages: `/backtests` (each server's latest backtest) and `/backtests/<id>` (the answer, the
versions and the timeline picture at `/backtests/<id>/timeline.png`). Mounted by watcher/web/app.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from watcher.backtest.render import conclusion, grouped, headline, summarize
from watcher.backtest.timeline import render
from watcher.web.context import WebContext

Render = Callable[..., HTMLResponse]
"""Pages.render(template, status_code=200, **values)."""


def _clean(ctx: WebContext, answer: dict[str, Any]) -> dict[str, Any]:
    """Free text from runs (reasons, evidence) with every known secret masked."""
    versions = [
        {
            **v,
            "reasons": [ctx.clean(r) for r in v["reasons"]],
            "problems": [{**p, "evidence": ctx.clean(p["evidence"])} for p in v["problems"]],
            "summary": ctx.clean("; ".join(summarize(v["problems"]))),
        }
        for v in answer["versions"]
    ]
    findings = [
        {**f, "evidence": ctx.clean(f["evidence"]), "sentence": ctx.clean(f["sentence"])} for f in answer["findings"]
    ]
    return {**answer, "versions": versions, "findings": findings}


def backtest_routes(ctx: WebContext, render_page: Render) -> list[BaseRoute]:
    def listing(request: Request) -> Response:
        rows = [
            {
                "id": row["id"],
                "server": row["server"],
                "package": row["package"],
                "since": row["since"],
                "until": row["until"],
                "status": row["status"],
                "finished": row["finished"] or "",
                "warned": len((row["answer"] or {}).get("warned") or []),
                "final_only": len((row["answer"] or {}).get("final_only") or []),
            }
            for row in ctx.store.latest_backtests()
        ]
        return render_page("backtests.html", page="backtests", rows=rows)

    def one(request: Request) -> Response:
        backtest_id = int(request.path_params["backtest_id"])
        row = ctx.store.backtest(backtest_id)
        if row is None or row["answer"] is None:
            return render_page("not_found.html", 404, page="backtest", what=f"backtest #{backtest_id}")
        answer = _clean(ctx, row["answer"])
        return render_page(
            "backtest.html",
            page="backtest",
            answer=answer,
            headline=headline(answer),
            conclusion=[ctx.clean(line) for line in conclusion(answer)],
            findings=grouped(answer["findings"]),
        )

    def picture(request: Request) -> Response:
        row = ctx.store.backtest(int(request.path_params["backtest_id"]))
        if row is None or row["answer"] is None:
            return Response(b"", status_code=404)
        return Response(render(row["answer"]).png, media_type="image/png", headers={"Cache-Control": "no-store"})

    return [
        Route("/backtests", listing, methods=["GET"]),
        Route("/backtests/{backtest_id:int}", one, methods=["GET"]),
        Route("/backtests/{backtest_id:int}/timeline.png", picture, methods=["GET"]),
    ]
