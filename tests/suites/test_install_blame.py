"""An install that fails for the watcher's own reasons (its registry unreachable, its certificate not trusted,
the registry down) is graded `error` with that reason, never `fail`, which would blame the team's server.

The rules are checked on the installers' own words (recorded from uv and npm against the loopback fakes
below); the end-to-end cases run the real installers against a registry that is down, one behind an
untrusted TLS-inspecting proxy, and one answering 503, each on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.inspecting_proxy import InspectingProxy
from tests.fakes.registry_server import serve_registry
from tests.suites.helpers import CLOSED, library_server, library_ts_server, write_config
from watcher.suites.build.blame import RULES, watcher_fault
from watcher.suites.runner import run_check

# What the installers print, as recorded here (uv 0.13, npm 11): the failing step's last lines.
UV_CERTIFICATE = """\
error: Failed to fetch: https://127.0.0.1:41965/simple/mcp/
  cause: error sending request for url (https://127.0.0.1:41965/simple/mcp/)
  cause: client error (Connect)
  cause: invalid peer certificate: UnknownIssuer
"""
NPM_CERTIFICATE = """\
npm error code SELF_SIGNED_CERT_IN_CHAIN
npm error errno SELF_SIGNED_CERT_IN_CHAIN
npm error request to https://127.0.0.1:41965/@modelcontextprotocol%2fsdk failed, reason: self-signed certificate in \
certificate chain
"""
UV_DOWN = """\
error: Request failed after 3 retries in 11.5s
  cause: Failed to fetch: http://127.0.0.1:9/simple/mcp/
  cause: error sending request for url (http://127.0.0.1:9/simple/mcp/)
  cause: client error (Connect)
  cause: tcp connect error
  cause: Connection refused (os error 111)
"""
NPM_DOWN = """\
npm error code ECONNREFUSED
npm error syscall connect
npm error errno ECONNREFUSED
npm error FetchError: request to http://127.0.0.1:9/@modelcontextprotocol%2fsdk failed, reason: connect ECONNREFUSED \
127.0.0.1:9
"""
UV_SERVER_ERROR = """\
error: Failed to fetch: http://127.0.0.1:41725/simple/mcp/
  cause: HTTP status server error (503 Service Unavailable) for url (http://127.0.0.1:41725/simple/mcp/)
"""
NPM_SERVER_ERROR = """\
npm error code E503
npm error 503 Service Unavailable - GET http://127.0.0.1:41725/@modelcontextprotocol%2fsdk
"""
# The server's own failures: an SDK version that does not exist, a dependency that does not resolve.
UV_NO_SOLUTION = """\
error: No solution found when resolving dependencies
  cause: Because there is no version of mcp==9.9.9 and you require mcp==9.9.9, we can conclude that your \
requirements are unsatisfiable.
"""
NPM_NO_SUCH_VERSION = """\
npm error code ETARGET
npm error notarget No matching version found for @modelcontextprotocol/sdk@9.9.9.
"""


@pytest.mark.parametrize(
    ("rule", "output", "named"),
    [
        ("registry-certificate", UV_CERTIFICATE, "invalid peer certificate: UnknownIssuer"),
        ("registry-certificate", NPM_CERTIFICATE, "SELF_SIGNED_CERT_IN_CHAIN"),
        ("registry-unreachable", UV_DOWN, "Connection refused"),
        ("registry-unreachable", NPM_DOWN, "ECONNREFUSED"),
        ("registry-server-error", UV_SERVER_ERROR, "503 Service Unavailable"),
        ("registry-server-error", NPM_SERVER_ERROR, "code E503"),
    ],
    ids=["uv-certificate", "npm-certificate", "uv-down", "npm-down", "uv-503", "npm-503"],
)
def test_each_rule_names_the_watchers_own_reason(rule: str, output: str, named: str):
    fault = watcher_fault(output)
    assert fault is not None and fault.rule == rule
    assert named in fault.reason
    explanation = next(r.explanation for r in RULES if r.id == rule)
    assert fault.reason.startswith(explanation)


@pytest.mark.parametrize("output", [UV_NO_SOLUTION, NPM_NO_SUCH_VERSION, ""], ids=["uv", "npm", "silent"])
def test_a_failure_no_rule_names_stays_the_servers(output: str):
    assert watcher_fault(output) is None


def test_every_rule_has_a_test_case():
    cases = {UV_CERTIFICATE, NPM_CERTIFICATE, UV_DOWN, NPM_DOWN, UV_SERVER_ERROR, NPM_SERVER_ERROR}
    covered = {fault.rule for fault in map(watcher_fault, cases) if fault is not None}
    assert covered == {rule.id for rule in RULES}


def _assert_error_not_fail(report: dict, rule: str, named: str) -> None:
    assert report["verdict"] == "error", report["reasons"]
    [reason] = [r["reason"] for r in report["reasons"]]
    assert "could not install" in reason and named in reason, reason
    assert report["install"]["fault_rule"] == rule
    assert "fail" not in [r["verdict"] for r in report["reasons"]]


def test_a_python_install_against_a_registry_that_is_down_is_an_error(tmp_path: Path, monkeypatch):
    # In the install room (the default sandbox where this machine has one) as without it: nothing answers.
    monkeypatch.setenv("UV_DEFAULT_INDEX", f"{CLOSED}/simple")
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    loaded = write_config(tmp_path, [library_server(requirements=[])], tmp_path / "envs")
    report = run_check(loaded, "library", "2.3.0")
    _assert_error_not_fail(report, "registry-unreachable", "Connection refused")


def test_a_python_install_against_a_registry_answering_503_is_an_error(tmp_path: Path, monkeypatch):
    with serve_registry(tmp_path / "registry") as registry:
        registry.fail("/simple/mcp/", status=503)
        monkeypatch.setenv("UV_DEFAULT_INDEX", registry.url("simple"))
        monkeypatch.setenv("UV_HTTP_RETRIES", "0")
        # Without a room: the install must reach the loopback registry (a room never reaches the host's).
        loaded = write_config(tmp_path, [library_server(requirements=[])], tmp_path / "envs", sandbox="off")
        report = run_check(loaded, "library", "2.3.0")
        assert registry.stats.by_path["/simple/mcp/"] >= 1  # the installer did ask it
    _assert_error_not_fail(report, "registry-server-error", "503 Service Unavailable")


def test_an_npm_install_behind_an_untrusted_inspecting_proxy_is_an_error(tmp_path: Path, monkeypatch):
    with InspectingProxy() as proxy:
        monkeypatch.setenv("npm_config_registry", proxy.base + "/")
        monkeypatch.setenv("npm_config_fetch_retries", "0")
        loaded = write_config(tmp_path, [library_ts_server(requirements=[])], tmp_path / "envs", sandbox="off")
        report = run_check(loaded, "library-ts", "1.32.2")
        assert proxy.connections >= 1  # npm did try it
    _assert_error_not_fail(report, "registry-certificate", "SELF_SIGNED_CERT_IN_CHAIN")
