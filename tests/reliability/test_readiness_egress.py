"""A readiness pass whose suite is installed and whose server is built through the egress proxy, in rooms, end to
end, then a check of the same server.

Two suite versions (benign CLIs made with `npm pack`, each with a `postinstall` that asks the proxy for the cloud's
metadata address) on the loopback npm registry, which the config names as `localhost`: a name, looked up by the
proxy through its resolver seam (the test's: `localhost` is 127.0.0.1, nothing else resolves). A team's server of
declared build (`language: other`) whose prepare steps are outside code in an install room: `npm install` of a
package from that registry (a configured SDK source, so an index the proxy allows) through the proxy, then a
script that asks the proxy for the metadata address. Readiness installs the new version, builds the server, runs
the suite against it: the server is ready, the installs completed through the proxy (the registry served the
tarballs, the package is in the server's environment), and each metadata request was refused (403) and recorded:
the suite's in the installed suite's record, the pass's summary and the readiness run's report, the build's in the
report under the server and its step. The check that follows installs the pinned version: its refusal is in the
check's report (`conformance_tool`), on the run page and in `status`. Nothing is sent off loopback: the proxy
refuses before it connects. A suite install whose postinstall fails after its refused request carries the refusal
in its error (a check puts it in `conformance_tool`). tests/boundary/test_unprivileged_watcher.py runs this as uid
65534 too.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import os
from datetime import date
from pathlib import Path

import pytest
import yaml
from starlette.requests import Request

from tests.fakes import conformance_suite as fake_suite
from tests.fakes.registry_server import serve_registry
from tests.readiness.helpers import known_sdk, publish
from tests.reliability.helpers import PACKAGE, node_server, pack
from tests.suites.helpers import CLOSED, ROOT
from watcher.boundary import sandbox
from watcher.config import load_config
from watcher.core.clock import START_VARIABLE
from watcher.core.errors import ConformanceError
from watcher.core.run_report import egress_refusals
from watcher.core.store import Store
from watcher.ops.status import collect_status, render_status
from watcher.readiness.cycle import check_readiness
from watcher.readiness.view import KV_RESULTS
from watcher.suites.build import indexes
from watcher.suites.judge.conformance import TOOL_RECORD, ensure_conformance
from watcher.suites.runner import run_check
from watcher.suites.state import REPORT_FILE
from watcher.web.access import Access
from watcher.web.app import Pages
from watcher.web.context import WebContext

pytestmark = [pytest.mark.timeout(600)]
TODAY = date(2026, 12, 1)
PINNED, NEW = "1.0.0", "1.1.0"
METADATA = "http://169.254.169.254/latest/meta-data/"
ASK = f"""
import json, urllib.request
open("ask-mark.txt", "w").write("the prepare step ran")
try:
    seen = urllib.request.urlopen({METADATA!r}, timeout=10).status
except Exception as exc:
    seen = "STOPPED: " + str(exc)[:120]
open("ask-seen.json", "w").write(json.dumps(seen))
"""
POSTINSTALL = """
const fs = require("fs"), http = require("http");
fs.writeFileSync("ask-mark.txt", "the suite's postinstall ran");
const proxy = new URL(process.env.HTTP_PROXY);
const seen = (what) => fs.writeFileSync("ask-seen.json", JSON.stringify(what));
const ask = http.request(
  {host: proxy.hostname, port: proxy.port, path: "http://169.254.169.254/latest/meta-data/", timeout: 10000},
  (answer) => { seen(answer.statusCode); answer.resume(); },
);
ask.on("error", (exc) => seen("STOPPED: " + exc.message));
ask.on("timeout", () => ask.destroy(new Error("no answer")));
ask.end();
"""
"""The suite's postinstall: first a mark, then the metadata address asked of the proxy (HTTP_PROXY, as npm's
scripts get it), and what came back."""
NAME = "localhost"
"""The registry's name in the config (the proxy allows loopback for an index written as loopback)."""
SUITE_REFUSAL = ("169.254.169.254", 80, "", "not_an_index", "conformance suite", "npm install", False)


async def resolve(host: str, port: int) -> list[str]:
    """The proxy's resolver in this test: address literals as they are, `localhost` (the registry) 127.0.0.1."""
    if host == NAME:
        return ["127.0.0.1"]
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        raise OSError(f"{host}: unknown to the test's resolver") from None


def _refusals(refused: object) -> list[tuple[object, ...]]:
    assert isinstance(refused, list), refused
    keys = ("host", "port", "address", "rule", "server", "step", "let_through")
    return [tuple(r[k] for k in keys) for r in refused]


def _suite_mark(tools: Path, version: str) -> tuple[str, object, list[tuple[object, ...]]]:
    """The postinstall's mark and what it saw, in the install folder of `version`, and that install's record."""
    for record in tools.glob(f"conformance-*/{TOOL_RECORD}"):
        saved = json.loads(record.read_text(encoding="utf-8"))
        if saved["version"] == version:
            package = record.parent / "node_modules" / PACKAGE
            seen = json.loads((package / "ask-seen.json").read_text(encoding="utf-8"))
            mark = (package / "ask-mark.txt").read_text(encoding="utf-8")
            return mark, seen, _refusals(saved["egress_refused"])
    raise AssertionError(f"no installed suite {version} under {tools}")


def test_a_readiness_pass_builds_its_server_through_the_egress_proxy_and_records_what_it_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = sandbox.choose("bubblewrap")
    if not chosen.active:
        pytest.skip(f"the run boundary cannot be had here: {chosen.reason}")
    monkeypatch.setenv(START_VARIABLE, "2026-12-01T09:00:00Z")
    boundary = indexes.boundary
    monkeypatch.setattr(indexes, "boundary", lambda config: dataclasses.replace(boundary(config), resolver=resolve))
    with serve_registry(tmp_path / "registry") as registry:
        tarballs = {}
        for version in (PINNED, NEW):
            sets = {"2025-11-25": ["server-reach"], **({"draft": ["server-reach"]} if version == NEW else {})}
            tree = fake_suite.write_suite(tmp_path / "packages" / version, version, sets, postinstall=POSTINSTALL)
            tarballs[version] = (pack(tree, tmp_path / "tarballs"), "2026-11-20T10:00:00.000Z")
        publish(registry.root, tarballs, NEW)
        install = ["npm", "install", "--no-audit", "--no-fund", "--registry", registry.base, f"{PACKAGE}@{PINNED}"]
        prepare = [install, ["python3", "-c", ASK]]
        server = {**node_server(tmp_path / "src", "reader"), "team": "books", "prepare": prepare}
        data = {
            "state": str(tmp_path / "state" / "watcher.db"),
            "sdks": [
                {"name": "python", "registry": "pypi", "package": "mcp", "url": f"{CLOSED}/simple/"},
                # The registry as an SDK source: an index the install room's proxy allows.
                {"name": "typescript", "registry": "npm", "package": "@modelcontextprotocol/sdk", "url": registry.base},
            ],
            "teams": [{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}],
            # The suite's registry by a name: the proxy looks it up (its resolver seam), as it does a real one's.
            "conformance": {
                "package": f"{PACKAGE}@{PINNED}",
                "npm_registry": registry.base.replace("127.0.0.1", "localhost"),
            },
            "servers": [server],
            "suites": {"runs_dir": str(tmp_path / "runs"), "envs_dir": str(tmp_path / "envs"), "sandbox": "bubblewrap"},
        }
        (tmp_path / "state").mkdir()
        (tmp_path / "watcher.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        loaded = load_config(tmp_path / "watcher.yaml", base_dir=ROOT)
        store = Store(tmp_path / "state" / "watcher.db")
        known_sdk(store)

        summary = check_readiness(loaded, store, today=TODAY)
        checked = run_check(loaded, "reader", "2.3.0")  # the pinned suite, installed for the check
        tarball_requests = {path: n for path, n in registry.stats.by_path.items() if path.startswith("/tarballs/")}

    assert summary["suite_version"] == NEW and list(summary["sets"]) == ["draft"], summary
    entry = store.get_kv(KV_RESULTS)["draft"]["servers"]["reader"]
    assert entry["status"] == "ready" and entry["suite_version"] == NEW, entry
    report = json.loads((Path(entry["run_dir"]) / REPORT_FILE).read_text(encoding="utf-8"))
    built = report["install"]
    assert built["ok"], built
    project = Path(built["project_dir"])
    # The outside code ran (its mark), in the install room: its one way out refused the metadata address...
    assert (project / "ask-mark.txt").read_text(encoding="utf-8") == "the prepare step ran"
    assert "403" in json.loads((project / "ask-seen.json").read_text(encoding="utf-8"))
    # (the build's npm install of the suite's package ran its postinstall, which asked the same: refused too)
    refused = built["egress_refused"]
    assert [(r["host"], r["port"], r["rule"], r["let_through"]) for r in refused] == [
        ("169.254.169.254", 80, "not_an_index", False)
    ] * 2, refused
    assert [r["server"] for r in refused] == ["reader"] * 2, refused
    assert [r["step"].split(" (")[0] for r in refused] == ["prepare step 1", "prepare step 2"], refused
    # ...and the same build's npm install reached its index through the proxy (the room has no other way to the
    # host's loopback) and completed: the registry served the pinned tarball, the package is in the environment.
    installed = json.loads((project / "node_modules" / PACKAGE / "package.json").read_text(encoding="utf-8"))
    assert installed["version"] == PINNED
    assert tarball_requests.get(f"/tarballs/{tarballs[PINNED][0].name}", 0) >= 2, tarball_requests  # suite + build
    assert tarball_requests.get(f"/tarballs/{tarballs[NEW][0].name}", 0) >= 1, tarball_requests
    assert report["step"]["room"].startswith("bubblewrap room"), report["step"]
    assert os.geteuid() != 0 or report["sandbox"]["user"].startswith("uid/gid 65534"), report["sandbox"]

    # The new suite version's postinstall ran in its install room (its mark) and asked for the metadata address:
    # refused (403), and recorded in the installed suite's record, the pass's summary and the readiness run's report.
    tools = tmp_path / "envs" / "_tools"
    mark, seen, recorded = _suite_mark(tools, NEW)
    assert mark == "the suite's postinstall ran" and seen == 403, seen
    assert recorded == [SUITE_REFUSAL], recorded
    assert _refusals(summary["egress_refused"]) == [SUITE_REFUSAL], summary
    assert _refusals(report["step"]["egress_refused"]) == [SUITE_REFUSAL], report["step"]
    assert [r["server"] for r in egress_refusals(report)] == ["reader", "reader", "conformance suite"]
    # The check installed the pinned version (its postinstall ran too): the refusal is in the check's report...
    mark, seen, recorded = _suite_mark(tools, PINNED)
    assert mark == "the suite's postinstall ran" and seen == 403 and recorded == [SUITE_REFUSAL], seen
    assert checked["conformance_tool"]["version"] == PINNED, checked.get("conformance_tool")
    assert _refusals(checked["conformance_tool"]["egress_refused"]) == [SUITE_REFUSAL], checked["conformance_tool"]
    assert [c["requirements"] for c in checked["conformance"] if not c.get("error")] == ["2025-11-25"], checked
    # ...on its run page, and in `status` under the server's last run (its build was the cached one: no refusal).
    run_id = store.record_run("reader", "python", "2.3.0", "cli", checked)
    request = {"type": "http", "query_string": b"", "headers": [], "path_params": {"run_id": str(run_id)}}
    html = bytes(Pages(WebContext(loaded, store), Access(None, False)).run(Request(request)).body).decode()
    assert "Egress refused" in html and "conformance suite: npm install" in html, html[-3000:]
    assert html.count("<code>169.254.169.254:80</code>") == 1, html[-3000:]
    text = render_status(collect_status(loaded, store))
    assert "egress REFUSED 1x: 169.254.169.254:80 (not_an_index)" in text, text


def test_a_suite_install_that_fails_after_a_refused_request_carries_the_refusal_in_its_error(tmp_path: Path) -> None:
    chosen = sandbox.choose("bubblewrap")
    if not chosen.active:
        pytest.skip(f"the run boundary cannot be had here: {chosen.reason}")
    # Its mark goes to the install's own folder (INIT_CWD: npm removes a package whose postinstall failed).
    failing = POSTINSTALL.replace('"ask-mark.txt"', 'process.env.INIT_CWD + "/ask-mark.txt"')
    failing = failing.replace("ask.end();", 'ask.on("close", () => process.exit(1));\nask.end();')
    sets = {"2025-11-25": ["server-reach"]}
    with serve_registry(tmp_path / "registry") as registry:
        tree = fake_suite.write_suite(tmp_path / "package", PINNED, sets, postinstall=failing)
        publish(registry.root, {PINNED: (pack(tree, tmp_path / "tarballs"), "2026-11-20T10:00:00.000Z")}, PINNED)
        boundary = dataclasses.replace(chosen, resolver=resolve)
        with pytest.raises(ConformanceError) as failed:
            ensure_conformance(
                f"{PACKAGE}@{PINNED}",
                tmp_path / "tools",
                boundary=boundary,
                registry=registry.base.replace("127.0.0.1", NAME),
                timeout=300,
            )
    [prefix] = (tmp_path / "tools").glob("conformance-*[!k]")  # (not its .lock)
    assert (prefix / "ask-mark.txt").read_text(encoding="utf-8") == "the suite's postinstall ran"  # it ran
    assert "installing" in str(failed.value) and _refusals(failed.value.egress_refused) == [SUITE_REFUSAL]
    assert not list((tmp_path / "tools").glob(f"conformance-*/{TOOL_RECORD}"))  # no record of a failed install
