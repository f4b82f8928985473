"""A loopback git host speaking smart HTTP through git's own `git http-backend` (CGI), behind basic auth.

    with FakeGitHost(root, token="s3cret") as host:      # root holds bare repositories, e.g. books.git
        url = host.repo_url("books.git")                  # http://127.0.0.1:PORT/books.git
        host.requests                                     # (method, path, authorized) per request

With a token set, a request without `Authorization: Basic base64(x-access-token:<token>)` answers 401.

    host.stall = threading.Event()   # upload-pack answers send half their bytes, then wait until it is set
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from tests.fakes.loopback import LoopbackServer


@dataclass
class FakeGitHost(LoopbackServer):
    root: Path = Path(".")
    token: str | None = None
    requests: list[tuple[str, str, bool]] = field(default_factory=list)
    stall: threading.Event | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def repo_url(self, name: str) -> str:
        return f"{self.base}/{name}"

    def _authorized(self, header: str | None) -> bool:
        if self.token is None:
            return True
        expected = "Basic " + base64.b64encode(f"x-access-token:{self.token}".encode()).decode()
        return header == expected

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        authorized = self._authorized(handler.headers.get("Authorization"))
        with self._lock:
            self.requests.append((handler.command, parts.path, authorized))
        body = _read_body(handler)
        if not authorized:
            handler.send_response(401)
            handler.send_header("WWW-Authenticate", 'Basic realm="fake"')
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": parts.path,
            "QUERY_STRING": parts.query,
            "REQUEST_METHOD": handler.command,
            "CONTENT_TYPE": handler.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_CONTENT_ENCODING": handler.headers.get("Content-Encoding", ""),
            "HTTP_GIT_PROTOCOL": handler.headers.get("Git-Protocol", ""),
        }
        done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False)
        head, _, payload = done.stdout.partition(b"\r\n\r\n")  # http-backend ends its CGI headers so
        status = 200
        headers: list[tuple[str, str]] = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        handler.send_response(status)
        for name, value in headers:
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        stall = self.stall
        fetching = handler.command == "POST" and parts.path.endswith("/git-upload-pack") and b"ls-refs" not in body
        if stall is not None and fetching:
            half = len(payload) // 2
            handler.wfile.write(payload[:half])
            handler.wfile.flush()
            stall.wait(60)  # a fetch caught half-way (the test kills it meanwhile)
            payload = payload[half:]
        handler.wfile.write(payload)


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(handler.rfile.readline().strip().split(b";")[0], 16)
            if size == 0:
                handler.rfile.readline()
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length else b""
