"""Bounded requests: an anonymous client sending a huge body without a length costs the service O(cap).

The attack: `POST /slack/events` (and `POST /login`) with a 200 MiB chunked body and no Content-Length,
no signature, no token. Before, the whole body was read before the size check (RSS 153 → 517 MiB). Here
the real service (`mcp-watcher run`, uvicorn on loopback) is sent such bodies on both endpoints; its peak
RSS (`VmHWM`) is read before and after, the refusal (413) must come before the client has sent the
body, and the service must still serve afterwards. `/login` reads its body only where a page token is
needed (not on a loopback bind): the same app, with a token, serves it from a child of this test.

Beside it, the one door is checked in the code: no handler of the service reads `request.body()`,
`form()`, `json()` or `stream()` itself (all go through `watcher.ops.bodies.read_body`), and every POST
route of the assembled app refuses a body over its cap.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from bench.bench_bodies import peak_rss, send_chunked
from tests.helpers import ROOT, free_port, start_service, wait_until
from watcher.ops.bodies import LIMITS, LOGIN_LIMIT, SLACK_EVENTS_LIMIT

pytestmark = pytest.mark.timeout(300)

HUGE = 200 * 1024 * 1024
"""The attack's body: 200 MiB, chunked, no Content-Length."""
GROWTH_LIMIT = 48 * 1024 * 1024
"""How much the peak RSS may grow across both attacks: the caps are 1 MiB and 4 KiB; the rest is the
interpreter's own allocations while it answers (a body read whole would add the 200 MiB)."""
SIGNING_SECRET = "signing-secret-for-the-body-test"
PAGE_TOKEN = "page-token-for-the-body-test-0001"


def test_huge_chunked_bodies_cost_the_running_service_only_their_cap(slack, write_config, tmp_path: Path):
    config = write_config({"slack": {"api_url": slack.api_url, "retries": 0}, "schedule": {"poll_minutes": 60}})
    env = {"SLACK_BOT_TOKEN": slack.token, "SLACK_SIGNING_SECRET": SIGNING_SECRET}
    service = start_service(config, env, tmp_path / "service.log")
    try:
        service.wait_http()
        service.wait_for_log("HTTP at POST /slack/events")
        before = peak_rss(service.process.pid)
        status, sent = send_chunked(service.port, "/slack/events", HUGE)
        # The mark: the attack really went out (well past the cap) and was answered by the service.
        assert sent > SLACK_EVENTS_LIMIT, sent
        assert status == 413
        assert sent < HUGE // 2, f"the service read {sent} bytes before refusing"
        login_status, _ = send_chunked(service.port, "/login", HUGE)
        assert login_status == 303  # open pages on loopback: /login reads nothing and sends you back
        after = peak_rss(service.process.pid)
        print(f"service peak RSS: {before / 2**20:.0f} MiB before, {after / 2**20:.0f} MiB after")
        assert after - before < GROWTH_LIMIT, (before, after)
        # Still serving: the probe, and a small (unsigned, so refused) Slack request read and judged.
        assert service.get("/healthz").status_code == 200
        small = httpx.post(f"{service.base}/slack/events", content=b"payload=%7B%7D", timeout=10)
        assert small.status_code == 401
    finally:
        assert service.terminate() == 0


_TOKEN_APP = """
import sys, time
from pathlib import Path
from datetime import UTC, datetime
import yaml
from watcher.config import load_config
from watcher.core.store import Store
from watcher.ops.health import HttpServer, Readiness, build_app
from watcher.web.access import Access
from watcher.web.app import web_parts
from watcher.web.context import WebContext

folder, port = Path(sys.argv[1]), int(sys.argv[2])
(folder / "watcher.yaml").write_text(yaml.safe_dump({"state": str(folder / "state.db")}))
loaded = load_config(folder / "watcher.yaml")
store = Store(folder / "state.db")
now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
routes, middleware = web_parts(WebContext(loaded, store, now=lambda: now), Access(sys.argv[3], False))
server = HttpServer(build_app(Readiness(store, 30, now, lambda: True), routes, middleware), "127.0.0.1", port)
server.start()
print("serving", flush=True)
while True:
    time.sleep(1)
"""


def test_login_with_a_page_token_reads_only_its_cap(tmp_path: Path):
    port = free_port()
    child = subprocess.Popen(
        [sys.executable, "-c", _TOKEN_APP, str(tmp_path), str(port), PAGE_TOKEN],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "serving"
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: httpx.get(f"{base}/healthz", timeout=2).status_code == 200, message="the app")
        before = peak_rss(child.pid)
        status, sent = send_chunked(port, "/login", HUGE)
        assert sent > LOGIN_LIMIT and status == 413, (status, sent)
        assert sent < HUGE // 2
        after = peak_rss(child.pid)
        print(f"token app peak RSS: {before / 2**20:.0f} MiB before, {after / 2**20:.0f} MiB after")
        assert after - before < GROWTH_LIMIT, (before, after)
        # Still serving, and a real sign-in still works.
        signed_in = httpx.post(f"{base}/login", data={"token": PAGE_TOKEN, "next": "/"}, timeout=10)
        assert signed_in.status_code == 303 and "mcp_watcher_session" in signed_in.cookies
    finally:
        child.kill()
        child.wait(timeout=10)


# --- the one door, in the code ---------------------------------------------------------------------------

READERS = frozenset({"body", "form", "json", "stream"})
DOOR = ROOT / "watcher" / "ops" / "bodies.py"


def direct_reads(source: str, filename: str) -> list[str]:
    """`request.body()` / `.form()` / `.json()` / `.stream()` calls in a module that handles Starlette
    requests (it imports from `starlette`), named by file and line."""
    tree = ast.parse(source, filename)
    imports_starlette = any(
        isinstance(node, ast.ImportFrom) and (node.module or "").startswith("starlette") for node in ast.walk(tree)
    )
    if not imports_starlette:
        return []
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in READERS
            and isinstance(node.func.value, ast.Name)
            and "request" in node.func.value.id.lower()
        ):
            found.append(f"{filename}:{node.lineno}: {node.func.value.id}.{node.func.attr}()")
    return found


def test_no_handler_reads_a_body_but_through_the_bounded_reader():
    found = []
    checked = 0
    for path in sorted((ROOT / "watcher").rglob("*.py")):
        if path == DOOR:
            continue
        checked += 1
        found += direct_reads(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert checked > 150
    assert not found, "read bodies with watcher.ops.bodies.read_body:\n" + "\n".join(found)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_planted_direct_read_is_found(reader: str):
    planted = (
        "from starlette.requests import Request\n\n"
        f"async def handler(request: Request) -> None:\n    await request.{reader}()\n"
    )
    assert direct_reads(planted, "planted.py") == [f"planted.py:4: request.{reader}()"]
    assert direct_reads(planted.replace("from starlette.requests", "from httpx"), "other.py") == []


def test_every_post_route_of_the_app_refuses_a_body_over_its_cap(tmp_path: Path):
    import yaml

    from watcher.config import load_config
    from watcher.core.store import Store
    from watcher.ops.health import Readiness, build_app
    from watcher.slackapp.connect import EventsEndpoint
    from watcher.web.access import Access
    from watcher.web.app import web_parts
    from watcher.web.context import WebContext

    (tmp_path / "watcher.yaml").write_text(yaml.safe_dump({"state": str(tmp_path / "state.db")}))
    store = Store(tmp_path / "state.db")
    ctx = WebContext(load_config(tmp_path / "watcher.yaml"), store)
    routes, middleware = web_parts(ctx, Access(PAGE_TOKEN, False))
    events = EventsEndpoint(None, SIGNING_SECRET)  # type: ignore[arg-type]  (refused before Bolt is asked)
    routes.append(Route("/slack/events", events.handle, methods=["POST"]))
    app = build_app(Readiness(store, 30, ctx.now(), lambda: True), routes, middleware)
    posts = sorted(r.path for r in app.routes if isinstance(r, Route) and "POST" in (r.methods or ()))
    assert posts == sorted(LIMITS), "a POST route without a cap in watcher.ops.bodies.LIMITS"
    client = TestClient(app)
    for path in posts:
        limit = LIMITS[path]
        over = client.post(path, content=b"x" * (limit + 1), headers={"Content-Type": "text/plain"})
        assert over.status_code == 413, (path, over.status_code)
        lying = client.post(path, content=iter([b"x" * limit, b"y"]), headers={"Content-Type": "text/plain"})
        assert lying.status_code == 413, (path, lying.status_code)  # chunked: no length to judge by
