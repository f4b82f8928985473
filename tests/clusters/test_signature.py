"""Failure signatures on real failure texts: one test per rule, the normalisers each on their own, and the same
failure on different servers (different layouts, paths, ports) giving the same key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clusters.helpers import recorded, start_failure
from watcher.clusters import signature
from watcher.clusters.normalise import NORMALISERS, normalise
from watcher.clusters.pytrace import last_traceback
from watcher.clusters.signature import RULES, signature_of

REMOVED_MODULE = ("fastmcp_notes", "weather_tools", "todo_server")


def _sign(name: str, server: str | None = None):
    found = signature_of(start_failure(server or name, recorded(f"{name}-2.0.0a1")), "mcp")
    assert found is not None
    return found


def test_import_failure_the_removed_fastmcp_module_is_one_signature_across_three_layouts():
    signatures = [_sign(name) for name in REMOVED_MODULE]
    assert {s.key for s in signatures} == {signatures[0].key}
    first = signatures[0]
    assert first.rule == "import_failure"
    assert first.parts == (
        "ModuleNotFoundError: No module named 'mcp.server.fastmcp'",
        "failed name: mcp.server.fastmcp",
    )
    assert first.reproduction == "from mcp.server.fastmcp import FastMCP"
    # The names imported by each server differ; the symbols read from the first one name the module and the class.
    assert {"mcp.server.fastmcp", "fastmcp", "FastMCP"} <= set(first.symbols)
    assert "Context" in _sign("weather_tools").symbols


def test_import_failure_of_the_team_s_own_module_is_another_signature():
    own, sdk = _sign("ledger_server"), _sign("fastmcp_notes")
    assert own.rule == "import_failure" and own.key != sdk.key
    assert own.parts[1] == "failed name: ledger_server.storage"


def test_sdk_frames_keep_the_sdk_s_frames_not_the_team_s_file():
    found = _sign("mcpserver_unknown_transport", "x")
    assert found.rule == "sdk_frames"
    assert found.parts == (
        "mcp/server/mcpserver/server.py in run",
        "ValueError: Unknown transport: sse-http",
    )
    assert "/tmp/" not in found.trace and "cl_try2" not in found.trace
    assert found.reproduction == 's.run("sse-http")'
    # The same failure from another file, another venv: the same key.
    moved = recorded("mcpserver_unknown_transport-2.0.0a1").replace("/tmp/cl_try2.py", "/srv/team-b/app/main.py")
    moved = moved.replace("/tmp/cl_mcp2/", "/home/ci/.venvs/b/")
    assert signature_of(start_failure("y", moved), "mcp").key == found.key


def test_own_traceback_names_the_last_frame_so_two_teams_bugs_stay_apart():
    found = _sign("mcpserver_host_kwarg", "x")  # raised at the call site: no frame inside the SDK
    assert found.rule == "own_traceback"
    assert found.parts == (
        "TypeError: MCPServer.__init__() got an unexpected keyword argument 'host'",
        "cl_try.py in <module>",
    )
    other = recorded("mcpserver_host_kwarg-2.0.0a1").replace("cl_try.py", "server.py")
    assert signature_of(start_failure("y", other), "mcp").key != found.key


def test_step_failure_without_a_traceback_normalises_the_url_and_time():
    def report(port: int) -> dict:
        found = start_failure("s", "INFO: listening")
        found["start"]["error"] = f"the server did not answer at http://127.0.0.1:{port}/mcp within 30 s"
        return found

    one, two = signature_of(report(40111), "mcp"), signature_of(report(52999), "mcp")
    assert one is not None and two is not None and one.key == two.key
    assert one.rule == "step_failure" and one.parts[0] == "start: the server did not answer at <url> within <n> s"


def test_conformance_failures_are_the_scenario_and_check_ids():
    report = {
        "verdict": "fail",
        "start": {"ok": True},
        "conformance": [
            {
                "requirements": "2025-11-25",
                "unexpected_failures": ["tools-call-with-progress:progress-notification", "ping"],
            }
        ],
    }
    found = signature_of(report, "mcp")
    assert found is not None and found.rule == "conformance_failures"
    assert found.parts == (
        "conformance 2025-11-25: ping",
        "conformance 2025-11-25: tools-call-with-progress:progress-notification",
    )
    assert found.reproduction == "conformance scenarios ping, tools-call-with-progress"
    assert "tools-call-with-progress" in found.symbols and "progress-notification" in found.symbols


def test_contract_breaks_are_the_rule_on_the_shape_of_any_item():
    def change(name: str) -> dict:
        return {
            "list": "tools",
            "name": name,
            "path": f"{name}.inputSchema",
            "rule": "tool_requires_capability",
            "breaksClients": True,
        }

    one = signature_of({"verdict": "fail", "contract": {"changes": [change("find_note")]}}, "mcp")
    two = signature_of({"verdict": "fail", "contract": {"changes": [change("forecast")]}}, "mcp")
    assert one is not None and two is not None and one.key == two.key
    assert one.parts == ("tool_requires_capability on any tools item at *.inputSchema",)


def test_reason_text_for_an_error_normalises_versions():
    def report(version: str) -> dict:
        return {
            "verdict": "error",
            "reasons": [{"verdict": "error", "reason": f"mcp {version}: could not install: HTTP 503"}],
        }

    one, two = signature_of(report("2.0.0a1"), "mcp"), signature_of(report("2.0.0b1"), "mcp")
    assert one is not None and two is not None and one.rule == "reason_text" and one.key == two.key


def test_a_pass_has_no_signature():
    assert signature_of({"verdict": "pass"}, "mcp") is None


def test_every_rule_has_a_doc_line_and_a_test_here():
    source = Path(__file__).read_text(encoding="utf-8")
    for name, rule in RULES:
        assert rule.__doc__ and "\n" not in rule.__doc__.strip().splitlines()[0]
        assert f"test_{name}" in source, name
    assert len(RULES) == 7 and RULES[0][1] is signature.import_failure


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("url", "at https://x.example/a?b=1 now", "at <url> now"),
        ("path", "in /srv/app/main.py here", "in <path> here"),
        ("host_port", "to 127.0.0.1:40111 and localhost:3000", "to <host>:<port> and <host>:<port>"),
        ("port", "port 8080 busy", "port <port> busy"),
        ("uuid", "session 0b5e3c1a-1c2d-4e5f-8a9b-0c1d2e3f4a5b gone", "session <id> gone"),
        ("hex", "object at 0x7f3a2b and commit 3d7b3111a2c4e5", "object at <hex> and commit <hex>"),
        ("version", "mcp 2.0.0a1 and v1.27.2 and 3.1.0-beta.2", "mcp <version> and <version> and <version>"),
        ("number", "pid 43121 after 30 s", "pid <n> after <n> s"),
        ("space", "a \n\t b", "a b"),
    ],
)
def test_each_normaliser(name: str, text: str, expected: str):
    assert name in {rule.name for rule in NORMALISERS}
    assert normalise(text) == expected


def test_the_traceback_reader_finds_the_last_exception_line():
    trace = last_traceback(recorded("weather_tools-2.0.0a1"))
    assert trace is not None and trace.exception == "ModuleNotFoundError"
    assert [f.func for f in trace.frames] == ["_run_module_as_main", "_run_code", "<module>", "<module>"]
    assert trace.frames[-1].code == "from mcp.server.fastmcp import Context, FastMCP"
