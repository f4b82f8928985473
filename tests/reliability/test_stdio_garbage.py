"""Class 11: a stdio server that prints garbage on stdout is reported with what it printed, not as "timed out".

The server is a real child process that prints a banner, its token, a JSON line that is no JSON-RPC and bytes
that are no UTF-8, then never answers. The snapshot names those lines (the token masked) in the era's status,
and the token reaches neither the output, the snapshot files nor the log.
"""

from __future__ import annotations

import logging
import secrets
import sys
from pathlib import Path

import pytest

from watcher.cli import main

GARBAGE_SERVER = """
import os, sys
print("Starting books server v1.2 on stdio")
print("token=" + os.environ["BOOKS_TOKEN"])
print('{"hello": "world"}')
sys.stdout.flush()
sys.stdout.buffer.write(b"\\xff\\xfe binary noise\\n")
sys.stdout.flush()
for _ in sys.stdin:  # reads every request and answers none
    pass
"""


@pytest.fixture
def server(tmp_path: Path) -> list[str]:
    script = tmp_path / "garbage_server.py"
    script.write_text(GARBAGE_SERVER, encoding="utf-8")
    return [sys.executable, str(script)]


def test_stdout_garbage_is_named_in_the_status_masked(
    tmp_path: Path, server: list[str], capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.DEBUG)
    token = f"tok-{secrets.token_hex(12)}"
    out_dir = tmp_path / "snap"
    argv = ["snapshot", "--era", "legacy", "--timeout", "3", "--out", str(out_dir), "--env", f"BOOKS_TOKEN={token}"]
    assert main([*argv, "--", *server]) == 1
    out = capsys.readouterr().out
    status = next(line for line in out.splitlines() if line.startswith("legacy: "))
    assert status.startswith(
        "legacy: error: no JSON-RPC answer within 3 s; the server printed on stdout what is not JSON-RPC: "
        '"Starting books server v1.2 on stdio" / "token=[secret]" / "{\\"hello\\": \\"world\\"}" (and 1 more line)'
    ), status
    assert "timed out" not in status
    server_json = (out_dir / "server.json").read_text(encoding="utf-8")
    assert "Starting books server v1.2 on stdio" in server_json
    for text in (out, server_json, caplog.text, (out_dir / "snapshot.json").read_text(encoding="utf-8")):
        assert token not in text
