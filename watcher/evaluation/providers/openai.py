"""Any OpenAI-compatible chat-completions endpoint through the official `openai` package (tools / tool_calls)."""

from __future__ import annotations

from typing import Any

import openai

from watcher.core import untrusted
from watcher.core.secret_policy import mask
from watcher.evaluation.providers.base import ProviderError, ToolCall, ToolOutcome, ToolSpec, Turn
from watcher.evaluation.settings import Evaluation


class OpenAIProvider:
    name = "openai"

    def __init__(self, settings: Evaluation, api_key: str) -> None:
        self.model = settings.model
        self._settings = settings
        self._key = api_key
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=settings.api_url,
            max_retries=settings.max_retries,
            timeout=settings.timeout_seconds,
        )

    def __repr__(self) -> str:  # never print the key
        return f"OpenAIProvider(model={self.model!r})"

    def conversation(self, prompt: str, tools: list[ToolSpec]) -> OpenAIConversation:
        return OpenAIConversation(self, prompt, tools)

    async def create(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_completion_tokens": self._settings.max_tokens,
        }
        if tools:
            kwargs["tools"] = tools
        if self._settings.temperature is not None:
            kwargs["temperature"] = self._settings.temperature
        try:
            return await self._client.chat.completions.create(**kwargs)
        except openai.RateLimitError as exc:
            raise ProviderError(
                "rate_limited", f"rate limited (HTTP 429) after {self._settings.max_retries} retries: {self._why(exc)}"
            ) from None
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise ProviderError("auth", f"HTTP {exc.status_code}: {self._why(exc)}") from None
        except openai.APIStatusError as exc:
            raise ProviderError("api_error", f"HTTP {exc.status_code}: {self._why(exc)}") from None
        except openai.APIConnectionError as exc:
            raise ProviderError("unreachable", f"provider unreachable: {self._why(exc)}") from None

    def _why(self, exc: Exception) -> str:
        return mask(str(getattr(exc, "message", None) or exc), (self._key,))[:300]

    async def aclose(self) -> None:
        await self._client.close()


class OpenAIConversation:
    def __init__(self, provider: OpenAIProvider, prompt: str, tools: list[ToolSpec]) -> None:
        self._provider = provider
        self._tools = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
            }
            for t in tools
        ]
        self._messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]

    async def next_turn(self) -> Turn:
        completion = await self._provider.create(self._messages, self._tools)
        if not completion.choices:
            raise ProviderError("api_error", "the response has no choices")
        choice = completion.choices[0]
        message = choice.message
        calls: list[ToolCall] = []
        raw_calls: list[dict[str, Any]] = []
        for call in message.tool_calls or []:
            function = getattr(call, "function", None)
            if function is None:  # a custom (non-function) tool call: not something we offered
                continue
            arguments, bad = _arguments(function.arguments)
            calls.append(ToolCall(call.id, function.name, arguments, bad))
            raw_calls.append(
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": function.name, "arguments": function.arguments},
                }
            )
        assistant: dict[str, Any] = {"role": "assistant", "content": message.content}
        if raw_calls:
            assistant["tool_calls"] = raw_calls
        self._messages.append(assistant)
        usage = completion.usage
        return Turn(
            text=message.content or "",
            calls=calls,
            input_tokens=int(usage.prompt_tokens or 0) if usage else 0,
            output_tokens=int(usage.completion_tokens or 0) if usage else 0,
            stop_reason=choice.finish_reason,
        )

    def add_tool_outcomes(self, outcomes: list[ToolOutcome]) -> None:
        for o in outcomes:
            self._messages.append({"role": "tool", "tool_call_id": o.call_id, "content": o.text})


def _arguments(raw: str | None) -> tuple[dict[str, Any], str | None]:
    """The call's arguments: a JSON object in a string, per the API."""
    try:
        value = untrusted.answer_json((raw or "{}").encode("utf-8", "surrogatepass"), "arguments")
    except ValueError as exc:
        return {}, f"arguments are not valid JSON: {str(exc).removeprefix('arguments: ')}"
    if not isinstance(value, dict):
        return {}, "arguments are not a JSON object"
    return value, None
