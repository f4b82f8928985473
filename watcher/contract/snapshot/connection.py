"""A stdio server process that serves several sessions in turn: each session's view of its streams."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage


@dataclass
class Connection:
    """A server process that serves several sessions in turn."""

    streams: Any
    errlog: TextIO
    turn: int
    """Which session this is, from 0: the request ids are the session's own (see `LaneReader`)."""


ID_SPAN = 1_000_000
"""Request ids of one session on a shared connection: turn × span up."""


class LaneReader:
    """A session's read end of a shared connection: not closed with the session, and the answers to
    earlier sessions' requests (one cancelled in a timeout, say) are not taken for this one's."""

    def __init__(self, inner: Any, turn: int) -> None:
        self._inner = inner
        self._base = turn * ID_SPAN

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            message = getattr(item, "message", None)
            if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError) or not isinstance(message.id, int):
                return item
            if self._base <= message.id < self._base + ID_SPAN:
                return SessionMessage(message.model_copy(update={"id": message.id - self._base}), item.metadata)

    def __aiter__(self) -> LaneReader:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        pass

    async def __aenter__(self) -> LaneReader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass


class LaneWriter:
    """A session's write end of a shared connection: its request ids moved into the session's range."""

    def __init__(self, inner: Any, turn: int) -> None:
        self._inner = inner
        self._base = turn * ID_SPAN

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        if self._base and isinstance(message, types.JSONRPCRequest) and isinstance(message.id, int):
            item = SessionMessage(message.model_copy(update={"id": message.id + self._base}), item.metadata)
        elif (
            self._base
            and isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
        ):
            params = dict(message.params or {})
            if isinstance(params.get("requestId"), int):
                params["requestId"] += self._base
                item = SessionMessage(message.model_copy(update={"params": params}), item.metadata)
        await self._inner.send(item)

    async def aclose(self) -> None:
        pass

    async def __aenter__(self) -> LaneWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass


@contextlib.asynccontextmanager
async def borrowed(connection: Connection) -> Any:
    read, write = connection.streams
    yield LaneReader(read, connection.turn), LaneWriter(write, connection.turn)
