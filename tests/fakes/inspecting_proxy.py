"""A registry behind a TLS-inspecting proxy that this machine does not trust, on loopback.

It presents a certificate chain that ends in the proxy's own self-signed root (made by `trustme`), as a
corporate proxy does: npm calls that `SELF_SIGNED_CERT_IN_CHAIN`, uv `invalid peer certificate:
UnknownIssuer`. No request gets through the handshake; `connections` counts the clients that tried.
"""

from __future__ import annotations

import socket
import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import trustme


class _Server(ThreadingHTTPServer):
    def __init__(self, context: ssl.SSLContext, owner: InspectingProxy) -> None:
        super().__init__(("127.0.0.1", 0), _Refuse)
        self.daemon_threads = True
        self.context, self.owner = context, owner

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        with self.owner.lock:
            self.owner.connections += 1
        sock.settimeout(5)  # the handshake runs here, in the accepting thread: a silent client must not hold it
        return self.context.wrap_socket(sock, server_side=True), address

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # every handshake fails: that is the point


class _Refuse(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_error(502, "a trusted client got through: not expected here")

    def log_message(self, *args: Any) -> None:
        pass


class InspectingProxy:
    def __init__(self) -> None:
        self.connections = 0
        self.lock = threading.Lock()
        self._folder = tempfile.TemporaryDirectory(prefix="inspecting-proxy-")
        root = trustme.CA()
        leaf = root.issue_cert("127.0.0.1", "localhost")
        chain = Path(self._folder.name) / "chain.pem"
        chain.write_bytes(
            leaf.private_key_pem.bytes() + b"".join(p.bytes() for p in leaf.cert_chain_pems) + root.cert_pem.bytes()
        )
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(chain)
        self._server = _Server(context, self)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._folder.cleanup()
