"""Outside text and our own: the one escaping layer every outgoing text goes through.

Text from outside (a registry, a team file, a server, the conformance suite, a request: versions, names,
descriptions, error messages, tracebacks) is plain `str`. Text we write for a medium has a type of its own,
and only ours may carry that medium's markup:

- Slack mrkdwn: `Mrkdwn`. The Block Kit builders (`watcher.notify.blocks`) and a notice's text take only
  `Mrkdwn`, so outside text cannot be spliced in raw: `Mrkdwn("*{}* failed: {}").format(name, error)`,
  `+`, `%` and `join` escape every part that is not `Mrkdwn` already (`&`, `<`, `>`: no link, mention or
  command of Slack's can be made of it; control characters are shown as text). `Mrkdwn(...)` itself is
  for our own literal text only (a test reads the code and fails on any other use outside this module
  and the Block Kit layer), and a link is made only by `blocks.link`.
- a terminal: `shown` turns every control character (escape sequences, carriage returns, bidi overrides)
  into visible text; every command's stdout and stderr go through it (`ShownStream`, installed by the CLI).
- HTML: Jinja's autoescape, and markupsafe's `Markup` for the few cells built in Python. A `Written` text
  is never trusted as HTML: its `__html__` escapes it like any other text.

The composition is markupsafe's (the library Jinja escapes with), given each medium's own escape function.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any, Self, TextIO, cast

import markupsafe


class Written(markupsafe.Markup):
    """Text we wrote for one medium; whatever is composed into it from elsewhere is quoted for that medium."""

    __slots__ = ()

    def __new__(cls, base: object = "") -> Self:
        # str's own constructor: Markup's would take an object's __html__ (HTML) as this medium's text.
        return str.__new__(cls, base)

    @staticmethod
    def quote(text: str) -> str:
        """`text` from outside, made inert for this medium."""
        raise NotImplementedError

    @classmethod
    def escape(cls, s: object, /) -> Self:
        """`s` as this medium's text: ours as it is, anything else (another medium's text too) quoted."""
        if type(s) is cls:
            return s
        return cls(cls.quote(str.__str__(s) if isinstance(s, str) else str(s)))

    def __html__(self) -> markupsafe.Markup:  # type: ignore[override]
        """Never HTML: shown on a page as the text it is (escaped, so a Markup of another type comes back)."""
        return markupsafe.escape(str.__str__(self))

    def __html_format__(self, format_spec: str, /) -> Self:
        """How markupsafe's formatter takes one of ours: as it is (padded, when asked)."""
        return type(self)(format(str.__str__(self), format_spec))


_SLACK_ENTITIES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    # `\\u` above the C0 range: inside a JSON string printed with ensure_ascii=False (which leaves DEL, the
    # C1 controls and the bidi marks as they are) that is JSON's own escape of the same character.
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def shown(text: str, keep: str = "") -> str:
    """`text` for a terminal: every control character (and bidi override) written out as `\\xNN` (C0) or
    `\\uNNNN`, so a tag or an error message cannot move the cursor, recolour, retitle or reorder what is
    shown. Characters in `keep` (e.g. the line breaks of a multi-line text of ours) pass."""
    return _CONTROL.sub(lambda match: match[0] if match[0] in keep else _visible(match), text)


class Mrkdwn(Written):
    """Slack mrkdwn we wrote (Block Kit text objects and a message's text)."""

    __slots__ = ()

    @staticmethod
    def quote(text: str) -> str:
        """Slack's three entities, so no `<url|label>`, `<!here>`, `<@user>` or `<#channel>` is made of it;
        control characters shown (`shown`; line breaks and tabs are layout, and stay)."""
        return shown(text, keep="\n\t").translate(_SLACK_ENTITIES)


class ShownStream:
    """A terminal stream that outside text cannot steer: every write is `shown` (line breaks and tabs kept).
    `mcp-watcher` runs every command with stdout and stderr wrapped so (`shown_streams`), so a value printed
    by any command, in any format, reaches the terminal as text. Our own control sequences (a progress line
    redrawn in place, a spinner) are written to `raw` (`raw_stream`)."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(shown(text, keep="\n\t"))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, …: the stream's own
        return getattr(self.raw, name)


def raw_stream(stream: TextIO) -> TextIO:
    """Where our own control sequences go: the stream under a `ShownStream`, or `stream` itself."""
    return stream.raw if isinstance(stream, ShownStream) else stream


@contextlib.contextmanager
def shown_streams() -> Iterator[None]:
    """`sys.stdout` and `sys.stderr` wrapped in `ShownStream` while the block runs (the CLI's commands)."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, ShownStream):
        sys.stdout = cast(TextIO, ShownStream(sys.stdout))
    if not isinstance(sys.stderr, ShownStream):
        sys.stderr = cast(TextIO, ShownStream(sys.stderr))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
