"""A readiness pass whose server is built by installs through the egress proxy, in rooms, end to end.

A new suite version (benign, made with `npm pack`) on the loopback npm registry; a team's server of declared
build (`language: other`) whose prepare steps are outside code in an install room: `npm install` of a package
from that registry (a configured SDK source, so an index the proxy allows) through the proxy, then a script
that asks the proxy for the cloud's metadata address. Readiness installs the new version, builds the server, runs
the suite against it: the server is ready, the install completed through the proxy (the registry served the
tarball, the package is in the server's environment), and the metadata request was refused (403) and recorded
in the readiness run's report under the server and its step. Nothing is sent off loopback: the proxy refuses
before it connects. tests/boundary/test_unprivileged_watcher.py runs this as uid 65534 too.
"""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path

import pytest
import yaml

from tests.fakes.registry_server import serve_registry
from tests.readiness.helpers import known_sdk, publish
from tests.reliability.helpers import PACKAGE, node_server, pack, write_suite
from tests.suites.helpers import CLOSED, ROOT
from watcher.boundary import sandbox
from watcher.config import load_config
from watcher.core.clock import START_VARIABLE
from watcher.core.store import Store
from watcher.readiness.cycle import check_readiness
from watcher.readiness.view import KV_RESULTS
from watcher.suites.state import REPORT_FILE

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


def test_a_readiness_pass_builds_its_server_through_the_egress_proxy_and_records_what_it_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = sandbox.choose("bubblewrap")
    if not chosen.active:
        pytest.skip(f"the run boundary cannot be had here: {chosen.reason}")
    monkeypatch.setenv(START_VARIABLE, "2026-12-01T09:00:00Z")
    with serve_registry(tmp_path / "registry") as registry:
        tarballs = {}
        for version in (PINNED, NEW):
            sets = {"2025-11-25": ["server-reach"], **({"draft": ["server-reach"]} if version == NEW else {})}
            tree = write_suite(tmp_path / "packages" / version, version, sets)
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
            "conformance": {"package": f"{PACKAGE}@{PINNED}", "npm_registry": registry.base},
            "servers": [server],
            "suites": {"runs_dir": str(tmp_path / "runs"), "envs_dir": str(tmp_path / "envs"), "sandbox": "bubblewrap"},
        }
        (tmp_path / "state").mkdir()
        (tmp_path / "watcher.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        loaded = load_config(tmp_path / "watcher.yaml", base_dir=ROOT)
        store = Store(tmp_path / "state" / "watcher.db")
        known_sdk(store)

        summary = check_readiness(loaded, store, today=TODAY)
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
    refused = built["egress_refused"]
    assert [(r["host"], r["port"], r["rule"], r["let_through"]) for r in refused] == [
        ("169.254.169.254", 80, "not_an_index", False)
    ], refused
    assert refused[0]["server"] == "reader" and refused[0]["step"].startswith("prepare step 2"), refused
    # ...and the same build's npm install reached its index through the proxy (the room has no other way to the
    # host's loopback) and completed: the registry served the pinned tarball, the package is in the environment.
    installed = json.loads((project / "node_modules" / PACKAGE / "package.json").read_text(encoding="utf-8"))
    assert installed["version"] == PINNED
    assert tarball_requests.get(f"/tarballs/{tarballs[PINNED][0].name}", 0) >= 2, tarball_requests  # suite + build
    assert report["step"]["room"].startswith("bubblewrap room"), report["step"]
    assert os.geteuid() != 0 or report["sandbox"]["user"].startswith("uid/gid 65534"), report["sandbox"]
