"""The real service process serves the pages from its own state, beside the probes."""

from __future__ import annotations

import re

import httpx

from tests.helpers import start_service, wait_until
from tests.test_service import service_config


def test_the_running_service_serves_the_status_pages(world, write_config, tmp_path):
    config = service_config(world, write_config)
    service = start_service(config, {}, tmp_path / "service.log")
    try:
        service.wait_http()
        service.wait_for_log("status page: http://127.0.0.1:")
        [url] = re.findall(r"status page: (http://127\.0\.0\.1:\d+/)", service.log())
        assert url == service.base + "/"  # the address the start-up log names is the page
        assert "Servers × SDK versions" in httpx.get(url, timeout=5).text
        service.wait_for_log("baseline taken for python")
        wait_until(lambda: "HTTP+SSE" in service.get("/deprecations").text, message="the spec rows on /deprecations")
        status = service.get("/api/status").json()
        [python] = status["sources"]
        assert python["sdk"] == "python" and python["ok"] is True and python["newest_stable"]
        home = service.get("/")
        assert home.status_code == 200 and "text/html" in home.headers["content-type"]
        assert "never polled" not in home.text and "python" in home.text
        picture = service.get("/deprecations/timeline.png")
        assert picture.status_code == 200 and picture.content[:4] == b"\x89PNG"
        assert service.get("/static/style.css").status_code == 200
    finally:
        assert service.terminate() == 0
