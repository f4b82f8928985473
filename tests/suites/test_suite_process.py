"""Children of a run: scrubbed environments, process groups, timeouts, readiness (real processes, no installs)."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

from tests.suites.helpers import process_running
from watcher.boundary.launch import Host, HostReason
from watcher.boundary.process import ServerProcess, free_port, run_command, scrubbed_env
from watcher.core.secret_policy import is_secret
from watcher.suites.judge.deprecations import scan_files, scan_lines

PARENT = {
    "PATH": "/usr/bin",
    "HOME": "/home/w",
    "LANG": "C.UTF-8",
    "SLACK_BOT_TOKEN": "xoxb-123-456",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T/B/X",
    "GITHUB_TOKEN": "ghp_abc",
    "AWS_SECRET_ACCESS_KEY": "s",
    "UV_INDEX_URL": "http://mirror.invalid/simple",
    "NPM_CONFIG__AUTHTOKEN": "t",
    "RANDOM_SETTING": "1",
    "MY_WEBHOOK": "https://hooks.slack.com/services/x",
}


def test_scrubbed_env_keeps_an_allow_list_and_drops_secrets():
    child = scrubbed_env(secret_names={"SLACK_BOT_TOKEN"}, source=PARENT, path_prepend=["/env/bin"])
    assert child.env["PATH"] == "/env/bin:/usr/bin"
    assert child.env["HOME"] == "/home/w"
    for name in ("SLACK_BOT_TOKEN", "SLACK_WEBHOOK_URL", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "RANDOM_SETTING"):
        assert name not in child.env
    assert "UV_INDEX_URL" not in child.env  # installer settings only reach installers


def test_installers_get_their_settings_but_no_credentials():
    child = scrubbed_env(source=PARENT, installer=True)
    assert child.env["UV_INDEX_URL"] == "http://mirror.invalid/simple"
    assert "NPM_CONFIG__AUTHTOKEN" not in child.env
    assert "SLACK_BOT_TOKEN" not in child.env


def test_server_env_is_added_but_secret_looking_names_are_refused():
    child = scrubbed_env(
        secret_names={"SLACK_BOT_TOKEN"},
        extra={"LIBRARY_MODE": "test", "SLACK_BOT_TOKEN": "x", "SERVICE_API_KEY": "k", "HOOK": "xoxb-1"},
        source=PARENT,
    )
    assert child.env["LIBRARY_MODE"] == "test"
    assert child.dropped == ["HOOK", "SERVICE_API_KEY", "SLACK_BOT_TOKEN"]
    assert not any(v.startswith("xox") for v in child.env.values())


def test_is_secret():
    assert is_secret("GITHUB_TOKEN") and is_secret("db_password") and is_secret("X", "xoxp-1")
    assert not is_secret("PATH", "/usr/bin") and not is_secret("LANG", "C.UTF-8")


GROUP_SCRIPT = textwrap.dedent(
    """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: time.sleep(1)"])
    print(child.pid, flush=True)
    while True:
        time.sleep(1)
    """
)


def test_run_command_timeout_kills_the_whole_group(tmp_path: Path):
    started = time.monotonic()
    result = run_command(
        [sys.executable, "-c", GROUP_SCRIPT],
        cwd=tmp_path,
        env=scrubbed_env().env,
        timeout=1.5,
        log_path=tmp_path / "log",
        stdout_path=tmp_path / "out",
        launcher=Host(HostReason.OPTED_OUT),
    )
    assert result.timed_out and not result.ok
    assert result.describe().startswith("timed out")
    assert time.monotonic() - started < 10
    grandchild = int((tmp_path / "out").read_text().split()[0])
    deadline = time.monotonic() + 5
    while process_running(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_running(grandchild)


def test_run_command_reports_exit_code_and_tail(tmp_path: Path):
    result = run_command(
        [sys.executable, "-c", "import sys; print('line one'); sys.exit('bad thing happened')"],
        cwd=tmp_path,
        env=scrubbed_env().env,
        timeout=30,
        log_path=tmp_path / "log",
        launcher=Host(HostReason.OPTED_OUT),
    )
    assert result.returncode == 1
    assert result.tail.splitlines() == ["line one", "bad thing happened"]


def test_run_command_that_cannot_start(tmp_path: Path):
    result = run_command(
        [str(tmp_path / "no-such-binary")],
        cwd=tmp_path,
        env=scrubbed_env().env,
        timeout=5,
        log_path=tmp_path / "l",
        launcher=Host(HostReason.OPTED_OUT),
    )
    assert result.returncode is None and "cannot start" in result.tail


HTTP_SERVER = textwrap.dedent(
    """
    import subprocess, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer
    subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: time.sleep(1)"])
    class H(BaseHTTPRequestHandler):
        def do_POST(self):
            self.send_response(400); self.end_headers()
        def log_message(self, *a):
            print("request", self.path, file=sys.stderr, flush=True)
    HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """
)


def test_server_process_waits_for_an_answer_and_stops_the_group(tmp_path: Path):
    port = free_port()
    server = ServerProcess(
        [sys.executable, "-c", HTTP_SERVER, str(port)],
        cwd=tmp_path,
        env=scrubbed_env(),
        log_dir=tmp_path / "run",
        transport="http",
        port=port,
        launcher=Host(HostReason.OPTED_OUT),
    )
    with server:
        started = server.start(timeout=20)
        assert started.ok, started.evidence
        assert started.url == f"http://127.0.0.1:{port}/mcp"
        pid = started.pid
        assert pid is not None and process_running(pid)
    assert not process_running(pid)
    assert "request /mcp" in (tmp_path / "run" / "server.stderr.log").read_text()


def test_server_that_exits_while_starting_gives_evidence(tmp_path: Path):
    port = free_port()
    script = "import sys; print('ImportError: cannot import name MCPServer', file=sys.stderr); sys.exit(3)"
    with ServerProcess(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=scrubbed_env(),
        log_dir=tmp_path,
        transport="http",
        port=port,
        launcher=Host(HostReason.OPTED_OUT),
    ) as server:
        started = server.start(timeout=20)
    assert not started.ok
    assert started.error == "the server exited with code 3 while starting"
    assert "ImportError: cannot import name MCPServer" in started.evidence


def test_deprecation_warnings_are_found_and_deduplicated(tmp_path: Path):
    lines = [
        "/env/lib/mcp/server/x.py:12: MCPDeprecationWarning: `streamable_http_path` is deprecated; use `path`",
        "  server.run(...)",
        "/env/lib/mcp/server/x.py:12: MCPDeprecationWarning: `streamable_http_path` is deprecated; use `path`",
        "(node:1234) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.",
        "(node:5678) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.",
        "INFO: nothing to see",
    ]
    found = scan_lines(lines)
    assert [(w["kind"], w["count"], w["runtime"]) for w in found] == [
        ("MCPDeprecationWarning", 2, "python"),
        ("DeprecationWarning", 2, "node"),
    ]
    assert found[1]["code"] == "DEP0040"
    (tmp_path / "a.log").write_text("\n".join(lines[:2]))
    (tmp_path / "b.log").write_text(lines[0])
    merged = scan_files([tmp_path / "a.log", tmp_path / "b.log", tmp_path / "missing.log"])
    assert len(merged) == 1 and merged[0]["count"] == 2
