"""Model providers behind one small interface: a conversation that yields turns and takes tool results.

Each provider talks through its official client package, with that package's own retries (429,
5xx, connection errors, honouring Retry-After). No response is ever cached: every turn is a call.
The API key is handed to the client object only; error texts are masked before they leave here.
"""

from __future__ import annotations

from watcher.evaluation.providers.base import (
    Conversation,
    Provider,
    ProviderError,
    ToolCall,
    ToolOutcome,
    ToolSpec,
    Turn,
)
from watcher.evaluation.settings import Evaluation

__all__ = [
    "Conversation",
    "Provider",
    "ProviderError",
    "ToolCall",
    "ToolOutcome",
    "ToolSpec",
    "Turn",
    "make_provider",
]


def make_provider(settings: Evaluation, api_key: str) -> Provider:
    if settings.provider == "anthropic":
        from watcher.evaluation.providers.anthropic import AnthropicProvider

        return AnthropicProvider(settings, api_key)
    from watcher.evaluation.providers.openai import OpenAIProvider

    return OpenAIProvider(settings, api_key)
