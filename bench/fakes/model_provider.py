"""A loopback model provider that speaks Anthropic's Messages API and OpenAI's chat-completions API.

It answers from a small deterministic policy: offer the tool whose name and description share the most
words with the user's prompt (at least MIN_SHARED), else answer without a tool; after a tool result,
answer "Done: <result>". Usage fields count words: input = words of the request body, output = words
of what it returns. Every request is recorded (with the key it carried) so tests can check that each
trial was a real call and sum the usage the API reported.

    fake.fail_next = [429, 429]   # the next requests get these statuses, then normal answers
    fake.fail_always = 429        # every request gets this status
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from bench.fakes.loopback import LoopbackServer

MIN_SHARED = 2
STOPWORDS = {"a", "an", "the", "is", "are", "of", "to", "and", "with", "by", "my", "for", "in", "on", "it", "i"}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def choose(prompt: str, tools: list[tuple[str, str, dict[str, Any]]]) -> tuple[str, dict[str, Any]] | None:
    """(tool, arguments) for the prompt, or None for "no tool". Ties go to the first name in order."""
    asked = words(prompt)
    scored = sorted(
        ((len(asked & (words(desc) | words(name.replace("_", " ")))), name, schema) for name, desc, schema in tools),
        key=lambda item: (-item[0], item[1]),
    )
    if not scored or scored[0][0] < MIN_SHARED:
        return None
    _, name, schema = scored[0]
    tokens = re.findall(r"[A-Za-z0-9]+", prompt)
    arguments: dict[str, Any] = {}
    for prop in schema.get("properties", {}):
        # The value is the word after the first word that starts like the property's name ("titled groceries").
        value = next((tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t.lower().startswith(prop[:4])), None)
        if value is not None or prop in schema.get("required", []):
            arguments[prop] = value if value is not None else "x"
    return name, arguments


class FakeProvider(LoopbackServer):
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail_next: list[int] = []
        self.fail_always: int | None = None
        self.error_message: str | None = None
        """The message of the errors it answers (None: "fake <status>")."""
        self._lock = threading.Lock()
        self._ids = 0
        self.handle_seconds: list[float] = []
        """How long the fake itself took per request (the benchmark's "provider response time")."""

    # --- recording ----------------------------------------------------------------------------------

    def usage_total(self, api: str, marker: str | None = None) -> tuple[int, int]:
        """(input, output) tokens of the answered requests of `api` whose tools mention `marker`."""
        rows = [
            r for r in self.requests if r["api"] == api and r["usage"] and (marker is None or marker in r["tools_text"])
        ]
        return sum(r["usage"][0] for r in rows), sum(r["usage"][1] for r in rows)

    # --- HTTP -----------------------------------------------------------------------------------------

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        began = time.perf_counter()
        try:
            self._answer(request)
        finally:
            self.handle_seconds.append(time.perf_counter() - began)

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length)
        body = json.loads(raw or b"{}")
        api = {"/v1/messages": "anthropic", "/v1/chat/completions": "openai"}.get(request.path.split("?")[0])
        with self._lock:
            self._ids += 1
            number = self._ids
            status = self.fail_next.pop(0) if self.fail_next else self.fail_always
            record: dict[str, Any] = {
                "api": api,
                "status": status or 200,
                "api_key": request.headers.get("x-api-key")
                or request.headers.get("Authorization", "").removeprefix("Bearer "),
                "tools_text": json.dumps(body.get("tools", [])),
                "usage": None,
            }
            self.requests.append(record)
        if api is None:
            return self._send(request, 404, {"error": "unknown path"})
        if status:
            return self._error(request, api, status)
        answer, usage = (self._anthropic if api == "anthropic" else self._openai)(body, number, len(raw.split()))
        record["usage"] = usage
        self._send(request, 200, answer)

    def _send(
        self,
        request: BaseHTTPRequestHandler,
        status: int,
        payload: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            request.send_header(name, value)
        request.end_headers()
        request.wfile.write(data)

    def _error(self, request: BaseHTTPRequestHandler, api: str, status: int) -> None:
        kind = "rate_limit_error" if status == 429 else "api_error"
        said = self.error_message or f"fake {status}"
        payload: dict[str, Any] = (
            {"type": "error", "error": {"type": kind, "message": said}}
            if api == "anthropic"
            else {"error": {"message": said, "type": kind, "param": None, "code": None}}
        )
        # retry-after-ms keeps the SDKs' retries from sleeping: the test does not wait on a clock.
        self._send(request, status, payload, {"retry-after-ms": "1"})

    # --- the two APIs ---------------------------------------------------------------------------------

    def _anthropic(
        self, body: dict[str, Any], number: int, input_tokens: int
    ) -> tuple[dict[str, Any], tuple[int, int]]:
        messages = body["messages"]
        last = messages[-1]
        results = (
            [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
            if isinstance(last["content"], list)
            else []
        )
        tools = [(t["name"], t.get("description", ""), t["input_schema"]) for t in body.get("tools", [])]
        pick = None if results else choose(_text(messages[0]["content"]), tools)
        if pick is None:
            text = "Done: " + " ".join(_text(r["content"]) for r in results) if results else "Hello."
            content: list[dict[str, Any]] = [{"type": "text", "text": text}]
            stop, out = "end_turn", len(text.split())
        else:
            name, arguments = pick
            content = [{"type": "tool_use", "id": f"toolu_{number}", "name": name, "input": arguments}]
            stop, out = "tool_use", 1 + len(json.dumps(arguments).split())
        answer = {
            "id": f"msg_{number}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": out},
        }
        return answer, (input_tokens, out)

    def _openai(self, body: dict[str, Any], number: int, input_tokens: int) -> tuple[dict[str, Any], tuple[int, int]]:
        messages = body["messages"]
        results = []
        for message in reversed(messages):
            if message["role"] != "tool":
                break
            results.insert(0, message["content"])
        tools = [
            (t["function"]["name"], t["function"].get("description", ""), t["function"]["parameters"])
            for t in body.get("tools", [])
        ]
        pick = None if results else choose(messages[0]["content"], tools)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if pick is None:
            text = "Done: " + " ".join(results) if results else "Hello."
            message["content"] = text
            finish, out = "stop", len(text.split())
        else:
            name, arguments = pick
            message["tool_calls"] = [
                {
                    "id": f"call_{number}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            ]
            finish, out = "tool_calls", 1 + len(json.dumps(arguments).split())
        answer = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": input_tokens, "completion_tokens": out, "total_tokens": input_tokens + out},
        }
        return answer, (input_tokens, out)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content if isinstance(b, dict))
