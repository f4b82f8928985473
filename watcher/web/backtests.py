"""The backtest pages: `/backtests` (each server's latest backtest) and `/backtests/<id>` (the answer, the
versions and the timeline picture at `/backtests/<id>/timeline.png`). Mounted by watcher/web/app.py."""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from watcher.backtest.answer import BacktestAnswer, FindingEntry, VersionEntry, load_answer
from watcher.backtest.render import conclusion, grouped, headline, summarize
from watcher.backtest.timeline import render
from watcher.core.store_schema import BacktestRow
from watcher.web.context import WebContext

Render = Callable[..., HTMLResponse]
"""Pages.render(template, status_code=200, **values)."""


class PageVersion(VersionEntry):
    """A version's row on the page: its problems summed up in one phrase per kind."""

    summary: str


def _clean(ctx: WebContext, answer: BacktestAnswer) -> tuple[BacktestAnswer, list[PageVersion]]:
    """Free text from runs (reasons, evidence) with every known secret masked; and the versions' rows."""
    versions: list[PageVersion] = [
        {
            **v,
            "reasons": [ctx.clean(r) for r in v["reasons"]],
            "problems": [{**p, "evidence": ctx.clean(p["evidence"])} for p in v["problems"]],
            "summary": ctx.clean("; ".join(summarize(v["problems"]))),
        }
        for v in answer["versions"]
    ]
    findings: list[FindingEntry] = [
        {**f, "evidence": ctx.clean(f["evidence"]), "sentence": ctx.clean(f["sentence"])} for f in answer["findings"]
    ]
    rows: list[VersionEntry] = [*versions]
    return {**answer, "versions": rows, "findings": findings}, versions


def _answer(row: BacktestRow | None) -> BacktestAnswer | None:
    """The row's stored answer, loaded (None: no such backtest, or none answered yet); an answer of no known
    shape is an AnswerError naming the backtest and the field."""
    if row is None or row["answer"] is None:
        return None
    return load_answer(row["answer"], f"backtest #{row['id']}")


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
                "warned": len(answer["warned"]) if answer else 0,
                "final_only": len(answer["final_only"]) if answer else 0,
            }
            for row in ctx.store.latest_backtests()
            for answer in [_answer(row)]
        ]
        return render_page("backtests.html", page="backtests", rows=rows)

    def one(request: Request) -> Response:
        backtest_id = int(request.path_params["backtest_id"])
        stored = _answer(ctx.store.backtest(backtest_id))
        if stored is None:
            return render_page("not_found.html", 404, page="backtest", what=f"backtest #{backtest_id}")
        answer, versions = _clean(ctx, stored)
        return render_page(
            "backtest.html",
            page="backtest",
            answer=answer,
            versions=versions,
            headline=headline(answer),
            conclusion=[ctx.clean(line) for line in conclusion(answer)],
            findings=grouped(answer["findings"]),
        )

    def picture(request: Request) -> Response:
        stored = _answer(ctx.store.backtest(int(request.path_params["backtest_id"])))
        if stored is None:
            return Response(b"", status_code=404)
        return Response(render(stored).png, media_type="image/png", headers={"Cache-Control": "no-store"})

    return [
        Route("/backtests", listing, methods=["GET"]),
        Route("/backtests/{backtest_id:int}", one, methods=["GET"]),
        Route("/backtests/{backtest_id:int}/timeline.png", picture, methods=["GET"]),
    ]
