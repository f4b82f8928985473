"""Anthropic's Messages API through the official `anthropic` package (tool_use / tool_result blocks)."""

from __future__ import annotations

from typing import Any

import anthropic

from watcher.core.secret_policy import mask
from watcher.evaluation.providers.base import ProviderError, ToolCall, ToolOutcome, ToolSpec, Turn
from watcher.evaluation.settings import Evaluation


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, settings: Evaluation, api_key: str) -> None:
        self.model = settings.model
        self._settings = settings
        self._key = api_key
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=settings.api_url,
            max_retries=settings.max_retries,
            timeout=settings.timeout_seconds,
        )

    def __repr__(self) -> str:  # never print the key
        return f"AnthropicProvider(model={self.model!r})"

    def conversation(self, prompt: str, tools: list[ToolSpec]) -> AnthropicConversation:
        return AnthropicConversation(self, prompt, tools)

    async def create(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        kwargs: dict[str, Any] = {"model": self.model, "max_tokens": self._settings.max_tokens, "messages": messages}
        if tools:
            kwargs["tools"] = tools
        if self._settings.temperature is not None:
            kwargs["temperature"] = self._settings.temperature
        try:
            return await self._client.messages.create(**kwargs)
        except anthropic.RateLimitError as exc:
            raise ProviderError(
                "rate_limited", f"rate limited (HTTP 429) after {self._settings.max_retries} retries: {self._why(exc)}"
            ) from None
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
            raise ProviderError("auth", f"HTTP {exc.status_code}: {self._why(exc)}") from None
        except anthropic.APIStatusError as exc:
            raise ProviderError("api_error", f"HTTP {exc.status_code}: {self._why(exc)}") from None
        except anthropic.APIConnectionError as exc:
            raise ProviderError("unreachable", f"provider unreachable: {self._why(exc)}") from None

    def _why(self, exc: Exception) -> str:
        return mask(str(getattr(exc, "message", None) or exc), (self._key,))[:300]

    async def aclose(self) -> None:
        await self._client.close()


class AnthropicConversation:
    def __init__(self, provider: AnthropicProvider, prompt: str, tools: list[ToolSpec]) -> None:
        self._provider = provider
        self._tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
        self._messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]

    async def next_turn(self) -> Turn:
        message = await self._provider.create(self._messages, self._tools)
        content: list[dict[str, Any]] = []
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
                content.append({"type": "text", "text": block.text})
            elif block.type == "tool_use":
                arguments = block.input if isinstance(block.input, dict) else {}
                calls.append(ToolCall(block.id, block.name, dict(arguments)))
                content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": arguments})
        self._messages.append({"role": "assistant", "content": content or [{"type": "text", "text": ""}]})
        return Turn(
            text="\n".join(texts),
            calls=calls,
            input_tokens=int(message.usage.input_tokens or 0),
            output_tokens=int(message.usage.output_tokens or 0),
            stop_reason=message.stop_reason,
        )

    def add_tool_outcomes(self, outcomes: list[ToolOutcome]) -> None:
        blocks = [
            {"type": "tool_result", "tool_use_id": o.call_id, "content": o.text, "is_error": o.is_error}
            for o in outcomes
        ]
        self._messages.append({"role": "user", "content": blocks})
