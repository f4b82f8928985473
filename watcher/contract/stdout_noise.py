"""What a stdio server printed on stdout that is not JSON-RPC: the evidence when it answers nothing usable.

The stdio transport (`watcher.boundary.stdio`) reads stdout line by line and hands each line that is not a
JSON-RPC message to the session's message handler as a pydantic ``ValidationError`` (it logs none of them: a
line may carry the server's token). A server that prints only such lines would otherwise look as if it "timed
out". The snapshot keeps the first few lines and names them in the era's status, masked like everything else
it writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import ValidationError

KEEP_LINES = 3
LINE_WIDTH = 160


@dataclass
class StdoutNoise:
    lines: list[str] = field(default_factory=list)
    """The first KEEP_LINES lines, each cut to LINE_WIDTH characters."""
    count: int = 0

    def add(self, message: object) -> None:
        """Record a message-handler item when it is a line the client could not read as JSON-RPC."""
        if not isinstance(message, ValidationError):
            return
        errors = message.errors()
        value = errors[0].get("input") if errors else None
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        text = " ".join(text.split())
        if not text:
            return  # a blank line carries nothing worth reporting
        self.count += 1
        if len(self.lines) < KEEP_LINES:
            self.lines.append(text if len(text) <= LINE_WIDTH else text[:LINE_WIDTH] + "…")

    def describe(self) -> str:
        shown = " / ".join(json.dumps(line, ensure_ascii=False) for line in self.lines)
        more = self.count - len(self.lines)
        tail = f" (and {more} more line{'s' if more != 1 else ''})" if more else ""
        return f"the server printed on stdout what is not JSON-RPC: {shown}{tail}"

    def status(self, status: str, timed_out: bool, timeout: float) -> str:
        """An era's error status with the noise named; a timeout is reported as the missing answer it is."""
        if not self.lines or not status.startswith("error"):
            return status
        if timed_out:
            return f"error: no JSON-RPC answer within {timeout:g} s; {self.describe()}"
        return f"{status}; {self.describe()}"
