"""A Python traceback read from a server's start-up output (the last one in it): its frames, the exception and
its message. The SDK's frames are told from the team's by the installed package's folder (`site-packages/mcp/`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_START = "Traceback (most recent call last):"
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_EXCEPTION = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure))(?::\s?(?P<message>.*))?$"
)
_INSTALLED = re.compile(r"/(?:site|dist)-packages/(?P<rel>.+)$")


@dataclass(frozen=True)
class Frame:
    path: str
    func: str
    code: str
    """The source line the traceback printed under the frame ('' when none)."""

    def installed_path(self) -> str | None:
        """The path inside site-packages (`mcp/server/…/server.py`), or None for a file outside it."""
        found = _INSTALLED.search(self.path)
        return found.group("rel") if found else None

    def in_package(self, module: str) -> bool:
        rel = self.installed_path()
        return rel is not None and (rel.startswith(f"{module}/") or rel == f"{module}.py")


@dataclass(frozen=True)
class Traceback:
    frames: tuple[Frame, ...]
    exception: str
    message: str


def last_traceback(text: str) -> Traceback | None:
    """The last complete Python traceback in `text` (frames and the exception line after them), or None."""
    start = text.rfind(_START)
    if start < 0:
        return None
    lines = text[start + len(_START) :].splitlines()
    frames: list[Frame] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        frame = _FRAME.match(line)
        if frame:
            code = ""
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if following.startswith("    ") and not _FRAME.match(following):
                code = following.strip()
                index += 1
            frames.append(Frame(frame.group("path"), frame.group("func"), code))
        elif not line.startswith(" ") and (exception := _EXCEPTION.match(line.strip())):
            return Traceback(tuple(frames), exception.group("type"), (exception.group("message") or "").strip())
        index += 1
    return None
