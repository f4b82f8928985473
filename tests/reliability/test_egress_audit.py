"""The egress audit end to end: a declared build whose prepare step (outside code, in an install room) asks the
watcher's proxy for the metadata address and for a loopback port that is no index. Under `suites.egress: block`
both are refused and recorded in the run report, shown on the run page and in `status`; under `audit` they are
recorded and let through (only the loopback one is asked for then: no test sends a packet off loopback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.requests import Request

from tests.boundary.fixtures.fake_index import Listener
from tests.suites.helpers import write_config
from tests.suites.test_declared_build import declared_server
from watcher.boundary import sandbox
from watcher.config import LoadedConfig
from watcher.core.store import Store
from watcher.ops.status import collect_status, render_status
from watcher.suites.runner import run_check
from watcher.web.access import Access
from watcher.web.app import Pages
from watcher.web.context import WebContext

ATTACK = """
import json, urllib.request
open("egress-mark.txt", "w").write("the prepare step ran")
seen = {}
for url in ASK:
    try:
        seen[url] = urllib.request.urlopen(url, timeout=10).status
    except Exception as exc:
        seen[url] = "STOPPED: " + str(exc)[:120]
open("egress-seen.json", "w").write(json.dumps(seen))
"""


def _boundary() -> None:
    chosen = sandbox.choose("bubblewrap")
    if not chosen.active:
        pytest.skip(f"the run boundary cannot be had here: {chosen.reason}")


def _run(tmp_path: Path, mode: str, ask: list[str]) -> tuple[dict, Path, LoadedConfig]:
    code = f"ASK = {ask!r}\n" + ATTACK
    server = declared_server([["python", "-c", code]], ["{workdir}/no-such-server", "{port}"])
    loaded = write_config(tmp_path, [server], tmp_path / "envs", sandbox="bubblewrap", egress=mode)
    report = run_check(loaded, "declared", "2.3.0")
    project = Path(report["install"]["project_dir"])
    assert (project / "egress-mark.txt").read_text() == "the prepare step ran"  # the outside code ran
    return report, project, loaded


def test_refused_requests_are_in_the_run_report_on_the_run_page_and_in_status(tmp_path: Path) -> None:
    _boundary()
    other = Listener()
    try:
        ask = ["http://169.254.169.254/latest/meta-data/", f"http://127.0.0.1:{other.port}/"]
        report, project, loaded = _run(tmp_path, "block", ask)
    finally:
        other.close()
    seen = json.loads((project / "egress-seen.json").read_text())
    assert all("403" in str(outcome) for outcome in seen.values()), seen
    assert other.hits == 0
    refused = report["install"]["egress_refused"]
    assert [(r["host"], r["port"], r["rule"], r["let_through"]) for r in refused] == [
        ("169.254.169.254", 80, "not_an_index", False),
        ("127.0.0.1", other.port, "not_an_index", False),
    ]
    assert {r["server"] for r in refused} == {"declared"} and all(
        r["step"].startswith("prepare step 1") for r in refused
    )
    loaded = write_config(tmp_path, [], tmp_path / "envs")
    store = Store(loaded.resolve(loaded.config.state))
    run_id = store.record_run("declared", "python", "2.3.0", "cli", report)
    loaded = write_config(tmp_path, [declared_server([], ["x"])], tmp_path / "envs")
    page = Pages(WebContext(loaded, store), Access(None, False)).run(
        Request({"type": "http", "query_string": b"", "headers": [], "path_params": {"run_id": str(run_id)}})
    )
    html = bytes(page.body).decode()
    assert "Egress refused" in html and "<code>169.254.169.254:80</code>" in html and "not_an_index" in html
    text = render_status(collect_status(loaded, store))
    assert "egress REFUSED 2x: 127.0.0.1:" in text and "169.254.169.254:80 (not_an_index)" in text


def test_under_audit_a_request_off_the_list_is_recorded_and_let_through(tmp_path: Path) -> None:
    _boundary()
    other = Listener()
    try:
        report, project, _ = _run(tmp_path, "audit", [f"http://127.0.0.1:{other.port}/"])
    finally:
        other.close()
    assert other.hits == 1  # let through (it answers nothing: the client's error is its own)
    [refused] = report["install"]["egress_refused"]
    assert (refused["host"], refused["port"], refused["let_through"]) == ("127.0.0.1", other.port, True)
    assert "STOPPED" in json.loads((project / "egress-seen.json").read_text())[f"http://127.0.0.1:{other.port}/"]
