"""The status pages in a real browser (Debian's Chromium via Playwright), over a state built by real suite runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import skip_unless_ci
from tests.web.browser_helpers import CHROMIUM, DESKTOP, NO_BROWSER, PHONE, Site, chromium, overflow, serve
from tests.web.fixtures.xss_server.xss_server import LOG_PAYLOAD, TOOL_PAYLOAD
from tests.web.helpers import NOW, SECRETS, VERSION_PAYLOAD, BuiltState, build_state
from watcher.suites.runner import read_report
from watcher.web.access import Access
from watcher.web.context import WebContext, known_secrets

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web-browser"), pytest.mark.timeout(300)]

SCRIPT_FREE = """() => ({
  pwned: typeof window.__pwned,
  scripts: document.querySelectorAll('script').length,
  handlers: document.querySelectorAll('[onerror], [onload], [onclick]').length,
  images: Array.from(document.images).map(i => i.getAttribute('src')),
})"""


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory, sdk_envs: Path) -> BuiltState:
    return build_state(tmp_path_factory.mktemp("web-state"), sdk_envs)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        skip_unless_ci(NO_BROWSER)
    with chromium() as browser:
        yield browser


def context(state: BuiltState) -> WebContext:
    return WebContext(state.loaded, state.store, now=lambda: NOW, secrets=known_secrets(state.loaded, SECRETS))


@pytest.fixture(scope="module")
def site(state: BuiltState) -> Iterator[Site]:
    with serve(context(state), Access(None, False), NOW) as site:
        yield site


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    page = browser.new_page(viewport=DESKTOP)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.dialogs = dialogs
    yield page
    page.close()


def matrix_cells(page: Any) -> dict[tuple[str, str], dict[str, str]]:
    rows = page.evaluate(
        """() => Array.from(document.querySelectorAll('table.matrix td')).map(td => ({
            server: td.closest('tr').dataset.server, version: td.dataset.version, state: td.dataset.state,
            text: td.innerText, href: (td.querySelector('a') || {}).href || ''}))"""
    )
    return {(r["server"], r["version"]): r for r in rows}


def test_the_matrix_shows_the_verdicts_of_the_real_runs(state: BuiltState, site: Site, page: Any):
    assert state.verdicts == {
        ("library", "2.3.0"): "pass",
        ("library", "1.27.0"): "fail",  # its code does not import under the 1.x SDK
        ("library-breaking", "2.3.0"): "fail",  # a required parameter added, a tool removed
        ("xss", "2.3.0"): "fail",  # not the library's contract at all
    }
    page.goto(site.base + "/")
    cells = matrix_cells(page)
    for (server, version), verdict in state.verdicts.items():
        run = state.store.run_by_id(state.run_ids[(server, version)])
        assert run is not None and read_report(Path(run["report"]["run_dir"]))["verdict"] == verdict
        cell = cells[(server, version)]
        assert cell["state"] == verdict and cell["text"].startswith(verdict)
        assert cell["href"].endswith(f"/runs/{state.run_ids[(server, version)]}")
    assert cells[("library", VERSION_PAYLOAD)]["state"] == "running"
    assert cells[("xss", VERSION_PAYLOAD)]["state"] == "queued"
    assert cells[("library-breaking", "1.27.0")]["state"] == "not-run"
    assert cells[("library-breaking", "1.27.0")]["href"] == ""
    headers = page.locator("table.matrix thead th.ver").all_inner_texts()
    assert [h.split("\n")[0] for h in headers] == [VERSION_PAYLOAD, "1.27.0", "2.3.0"]
    assert "baseline" in headers[2] and "newest stable" in headers[2]
    assert page.locator("tr[data-server] th").all_inner_texts() == ["library", "library-breaking", "xss"]
    # The matrix comes first; the sources are one line of counts, their table folded until asked for.
    order = page.evaluate(
        """() => Array.from(document.querySelectorAll('main table, main .sources-line, main .cards'))
            .map(e => e.className.split(' ')[0])"""
    )
    assert order[0] == "matrix" and order.index("cards") < order.index("sources-line") < order.index("sources")
    line = page.locator(".sources-line").inner_text()
    assert line.startswith("3 sources:") and "never polled" in line  # python, typescript never polled; spec read
    assert page.locator("details.sources").get_attribute("open") is None
    assert not page.locator("table.sources").is_visible()
    page.locator("details.sources > summary").click()
    sources = page.locator("table.sources").inner_text()
    assert "python" in sources and "2.3.0" in sources and "spec" in sources
    cards = page.locator(".cards").inner_text()
    assert "2027-03-30" in cards and "in 121 days" in cards and "HTTP+SSE transport" in cards
    assert "1 failed" in cards and "1 running" in cards and "2 queued" in cards
    assert page.dialogs == []


def test_the_team_filter_and_the_server_search(site: Site, page: Any):
    page.goto(site.base + "/")
    assert page.locator("form.filter .count").inner_text().startswith("3 of 3 servers")
    page.locator("form.filter select[name=team]").select_option("books")
    page.locator("form.filter button[type=submit]").click()
    page.wait_for_url("**/?team=books*")
    assert page.locator("tr[data-server] th").all_inner_texts() == ["library", "library-breaking", "xss"]
    page.locator("form.filter input[name=q]").fill("BREAK")
    page.locator("form.filter button[type=submit]").click()
    page.wait_for_url("**q=BREAK*")
    assert page.locator("tr[data-server] th").all_inner_texts() == ["library-breaking"]
    assert page.locator("form.filter .count").inner_text().startswith("1 of 3 servers")
    page.goto(site.base + "/?team=nobody")
    assert (
        page.locator("table.matrix").count() == 0
        and "No team nobody is configured" in page.locator("main").inner_text()
    )
    assert page.locator("form.filter .count").inner_text().startswith("no team nobody")
    page.goto(site.base + "/?q=nothing-like-it")
    assert "No server matches" in page.locator("main").inner_text()


def test_a_run_page_shows_the_contract_change_breaking_first(state: BuiltState, site: Site, page: Any):
    page.goto(site.base + "/")
    page.locator('tr[data-server="library-breaking"] td[data-version="2.3.0"] a').click()
    page.wait_for_url(f"**/runs/{state.run_ids[('library-breaking', '2.3.0')]}")
    assert page.locator("h1").inner_text().startswith("fail library-breaking on mcp 2.3.0")
    groups = page.locator("main h3").all_inner_texts()
    assert groups[0].startswith("Breaks clients")
    breaking = page.locator("table.changes").first.inner_text()
    assert "required_parameter_added" in breaking and "author" in breaking
    assert "tool_removed" in breaking and "find_book_by_author" in breaking
    assert "contract: 2 change(s) that break clients" in page.locator("main").inner_text()
    # The library's own run: its real conformance set, judged against the committed expected failures.
    page.goto(site.base + f"/runs/{state.run_ids[('library', '2.3.0')]}")
    conformance = page.locator("table").first.inner_text()
    report = state.store.run_by_id(state.run_ids[("library", "2.3.0")])["report"]
    [result] = report["conformance"]
    assert "2025-11-25" in conformance and f"{result['passed']} / {result['scenarios']}" in conformance
    # The run that would not start: the evidence is the server's own traceback.
    page.goto(site.base + f"/runs/{state.run_ids[('library', '1.27.0')]}")
    evidence = page.locator("pre.log").first.inner_text()
    assert "ImportError" in evidence and "MCPServer" in evidence
    assert page.goto(site.base + "/runs/999999").status == 404


def test_payloads_from_servers_and_registries_stay_text(state: BuiltState, site: Site, page: Any):
    xss_run = state.run_ids[("xss", "2.3.0")]
    queued = state.run_ids[("xss", VERSION_PAYLOAD)]
    expected = {
        "/": [VERSION_PAYLOAD],
        f"/runs/{xss_run}": [TOOL_PAYLOAD, LOG_PAYLOAD, "MCPDeprecationWarning"],
        f"/runs/{queued}": [VERSION_PAYLOAD],
        "/deprecations": ["HTTP+SSE"],
    }
    for path, texts in expected.items():
        page.goto(site.base + path)
        page.wait_for_load_state("load")
        shown = page.locator("body").inner_text()
        for text in texts:
            assert text in shown, f"{path}: {text!r} is not shown as text"
        found = page.evaluate(SCRIPT_FREE)
        assert found["pwned"] == "undefined", path
        assert found["scripts"] == 0 and found["handlers"] == 0, (path, found)
        assert all(src == "/deprecations/timeline.png" for src in found["images"]), found
    assert page.dialogs == []


def test_no_horizontal_scroll_at_phone_width_and_on_a_desktop(site: Site, browser: Any, tmp_path: Path):
    for name, viewport, scheme in (("phone", PHONE, "light"), ("desktop", DESKTOP, "light"), ("dark", PHONE, "dark")):
        page = browser.new_page(viewport=viewport, color_scheme=scheme)
        try:
            for path in ("/", "/deprecations"):
                page.goto(site.base + path)
                sizes = overflow(page)
                assert sizes["scrollWidth"] <= sizes["innerWidth"] == viewport["width"], (name, path, sizes)
            page.goto(site.base + "/")
            shot = page.screenshot(path=str(tmp_path / f"matrix-{name}.png"), full_page=True)
            assert shot[:8] == b"\x89PNG\r\n\x1a\n"
            background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
            channels = [int(c) for c in background.removeprefix("rgb(").rstrip(")").split(",")]
            assert (sum(channels) < 150) if scheme == "dark" else (sum(channels) > 600), (scheme, background)
        finally:
            page.close()


def test_the_timeline_picture_is_served(site: Site):
    response = httpx.get(site.base + "/deprecations/timeline.png", timeout=30)
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"
    assert response.content[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_secret_on_any_page_or_in_the_api(state: BuiltState, site: Site):
    run_pages = [f"/runs/{run_id}" for run_id in state.run_ids.values()]
    for path in ["/", "/api/status", "/deprecations", *run_pages]:
        body = httpx.get(site.base + path, timeout=30).text
        for name, value in SECRETS.items():
            assert value not in body, f"{name} shown on {path}"
    api = httpx.get(site.base + "/api/status", timeout=30).json()
    [failed] = api["outbox"]["failed_notices"]
    assert failed["error"] == "invalid_auth (sent [secret])"
    cells = {
        (row["server"], c["version"]): c["state"]
        for m in api["matrices"]
        for t in m["teams"]
        for row in t["servers"]
        for c in row["cells"]
    }
    assert {k: cells[k] for k in state.verdicts} == state.verdicts


def test_a_token_is_required_where_the_pages_are_not_on_loopback(state: BuiltState, browser: Any):
    token = SECRETS["MCP_WATCHER_PAGE_TOKEN"]
    with serve(context(state), Access(token, protect_metrics=False), NOW) as site:
        assert httpx.get(site.base + "/api/status").status_code == 401
        assert httpx.get(site.base + "/", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert httpx.get(site.base + "/api/status", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        assert httpx.get(site.base + "/healthz").status_code == 200
        assert httpx.get(site.base + "/readyz").status_code in (200, 503)  # open to probes, whatever it says
        assert httpx.get(site.base + "/metrics").status_code == 200
        page = browser.new_page(viewport=PHONE)
        try:
            page.goto(site.base + "/deprecations")
            assert page.url.endswith("/login?next=/deprecations")
            page.fill("input[name=token]", "not-the-token")
            page.click("button[type=submit]")
            assert "That token is not right." in page.locator("main").inner_text()
            page.fill("input[name=token]", token)
            page.click("button[type=submit]")
            page.wait_for_url("**/deprecations")
            assert "Deprecated MCP features" in page.locator("h1").inner_text()
            [cookie] = page.context.cookies()
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and token not in cookie["value"]
            page.goto(site.base + "/")
            assert page.locator("table.matrix").count() == 1
            assert token not in page.content()
        finally:
            page.close()
