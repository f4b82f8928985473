"""Debian's Chromium driven by Playwright (never a browser download), and the pages served on loopback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from watcher.ops.health import HttpServer, Readiness, build_app
from watcher.web.access import Access
from watcher.web.app import web_parts
from watcher.web.context import WebContext

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NO_BROWSER = (
    "browser tests skipped: no Chromium at /usr/bin/chromium and none could be installed "
    "(scripts/test installs Debian's chromium package when it runs as root)"
)
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


@dataclass
class Site:
    base: str
    ctx: WebContext


@contextlib.contextmanager
def serve(ctx: WebContext, access: Access, now: datetime) -> Iterator[Site]:
    """The service's HTTP app (probes, metrics and the pages) on 127.0.0.1 and a free port."""
    readiness = Readiness(ctx.store, 30, now, lambda: True)
    server = HttpServer(build_app(readiness, *web_parts(ctx, access)), "127.0.0.1", 0)
    server.start()
    try:
        yield Site(f"http://127.0.0.1:{server.port}", ctx)
    finally:
        server.stop()


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def overflow(page: Any) -> dict[str, int]:
    return page.evaluate("() => ({scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth})")
