"""The one way a handler of the service's HTTP app reads a request body: as a stream, against a cap.

A body is refused (413) the moment it passes its cap, before the rest is read: a declared Content-Length
over the cap is refused unread, and a chunked body (no length) is counted piece by piece as uvicorn hands
the pieces over. So a request costs at most its cap plus one piece of memory, whoever sent it: no
signature or token is checked before the body is read, since checking one needs the body.

No handler calls `request.body()`, `form()`, `json()` or `stream()` itself (tests/ops/test_bodies.py reads
the code and fails on one); each reads with `read_body` and its own cap from `LIMITS`.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request

SLACK_EVENTS_LIMIT = 1024 * 1024
"""POST /slack/events: Slack's interaction payloads are far smaller (a modal submission is a few KiB)."""
LOGIN_LIMIT = 4096
"""POST /login: a token and the page to go back to."""
LIMITS = {"/slack/events": SLACK_EVENTS_LIMIT, "/login": LOGIN_LIMIT}
"""The cap of every path that takes a body (the docs' limits table and the tests read it)."""
TOO_LARGE = "request too large"


def _refuse(limit: int) -> HTTPException:
    return HTTPException(status_code=413, detail=f"{TOO_LARGE} (the limit is {limit} bytes)")


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, read piece by piece; HTTPException 413 as soon as it is longer than `limit`."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.strip().isdigit() or int(declared) > limit):
        raise _refuse(limit)
    body = bytearray()
    async for piece in request.stream():
        body += piece
        if len(body) > limit:
            raise _refuse(limit)
    return bytes(body)
