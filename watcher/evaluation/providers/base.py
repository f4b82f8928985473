"""What every model provider shares: the interface (a conversation that yields turns and takes tool results)
and the turns, tool calls and outcomes that cross it.

Each provider talks through its official client package, with that package's own retries (429,
5xx, connection errors, honouring Retry-After). No response is ever cached: every turn is a call.
The API key is handed to the client object only; error texts are masked before they leave here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the server listed it, as offered to the model."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    bad_arguments: str | None = None
    """Why the model's arguments could not be read (then the call is not sent to the server)."""


@dataclass(frozen=True)
class ToolOutcome:
    call_id: str
    text: str
    is_error: bool


@dataclass(frozen=True)
class Turn:
    text: str
    calls: list[ToolCall] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    stop_reason: str | None = None


class ProviderError(Exception):
    """The provider did not answer usefully after its SDK's retries; `kind` says how."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # rate_limited | auth | api_error | unreachable


class Conversation(Protocol):
    async def next_turn(self) -> Turn: ...

    def add_tool_outcomes(self, outcomes: list[ToolOutcome]) -> None: ...


class Provider(Protocol):
    name: str
    model: str

    def conversation(self, prompt: str, tools: list[ToolSpec]) -> Conversation: ...

    async def aclose(self) -> None: ...
