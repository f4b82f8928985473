"""Slack's Socket Mode side, on loopback: a real WebSocket server (the `websockets` library) that the app
reaches through the URL ``apps.connections.open`` answers.

On each connection it says ``hello`` like Slack; ``send(type, payload)`` puts one envelope on the newest
connection and returns the app's acknowledgement (the message carrying the same ``envelope_id``)::

    ack = socket.send("interactive", payload)                       # a click
    ack = socket.send("interactive", payload, retry_attempt=1)      # the same delivery again
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Server, ServerConnection, serve


@dataclass
class SocketModeServer:
    tickets: list[str] = field(default_factory=list)
    """Every ticket a connection presented (one per apps.connections.open answered)."""

    def __post_init__(self) -> None:
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._connections: list[ServerConnection] = []
        self._acks: dict[str, dict[str, Any]] = {}
        self._changed = threading.Condition()

    def start(self) -> SocketModeServer:
        self._server = serve(self._serve, "127.0.0.1", 0)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def url(self) -> str:
        assert self._server is not None, "start() the socket server first"
        ticket = uuid.uuid4().hex
        self.tickets.append(ticket)
        return f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}/link/?ticket={ticket}"

    def _serve(self, connection: ServerConnection) -> None:
        with self._changed:
            self._connections.append(connection)
            self._changed.notify_all()
        connection.send(json.dumps({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"}}))
        try:
            for message in connection:
                data = json.loads(message)
                with self._changed:
                    self._acks[str(data.get("envelope_id"))] = data
                    self._changed.notify_all()
        except ConnectionClosed:
            pass
        finally:
            with self._changed:
                self._connections.remove(connection)
                self._changed.notify_all()

    def wait_connected(self, timeout: float = 10) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: bool(self._connections), timeout)

    @property
    def connected(self) -> int:
        with self._changed:
            return len(self._connections)

    def send(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        envelope_id: str | None = None,
        retry_attempt: int | None = None,
        timeout: float = 5,
    ) -> dict[str, Any] | None:
        """One envelope to the app; its acknowledgement, or None if none came within ``timeout``."""
        envelope_id = envelope_id or uuid.uuid4().hex
        envelope: dict[str, Any] = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": kind != "events_api",
        }
        if retry_attempt is not None:
            envelope |= {"retry_attempt": retry_attempt, "retry_reason": "timeout"}
        with self._changed:
            assert self._connections, "no Socket Mode connection"
            connection = self._connections[-1]
            self._acks.pop(envelope_id, None)
        connection.send(json.dumps(envelope))
        with self._changed:
            self._changed.wait_for(lambda: envelope_id in self._acks, timeout)
            return self._acks.get(envelope_id)
