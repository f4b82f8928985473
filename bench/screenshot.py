"""Regenerates docs/status-page.png: the matrix at desktop width, in Debian's Chromium driven by Playwright.

    .venv/bin/python bench/screenshot.py [--out docs/status-page.png] [--width 1280]

The state is the benchmark's generated one, small (12 servers × 6 versions, mixed verdicts), with the
clock fixed, so the picture only changes when the page does.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_web import NOW, fill  # noqa: E402
from tests.web.browser_helpers import CHROMIUM, NO_BROWSER, chromium, overflow, serve  # noqa: E402
from watcher.config import load_config  # noqa: E402
from watcher.web.access import Access  # noqa: E402
from watcher.web.context import WebContext  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "status-page.png")
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()
    if not CHROMIUM.exists():
        print(NO_BROWSER, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        store, config = fill(Path(tmp), servers=12, versions=6)
        store.queue_run("server-000", "python", "2.4.0b6", "release")
        loaded = load_config(config, base_dir=ROOT)
        ctx = WebContext(loaded, store, now=lambda: NOW)
        with serve(ctx, Access(None, False), NOW) as site, chromium() as browser:
            page = browser.new_page(viewport={"width": args.width, "height": 900})
            page.goto(site.base + "/")
            sizes = overflow(page)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), full_page=True)
        store.close()
    print(f"{args.out} ({args.width} px wide; scrollWidth {sizes['scrollWidth']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
