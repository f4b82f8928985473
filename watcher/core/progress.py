"""Stages of long work (`check`, `eval`, `snapshot`, the first cycle of `run`) shown as they happen.

On a terminal: a live spinner (yaspin, imported only here, only then) and one line per finished stage with
its time; elsewhere (a pipe, a log): one plain line per stage; with --json: nothing. The work reports its
stages by calling ``stage(text)``; nothing is shown unless a command turned a display on with ``showing``.
Lines go to stderr, so stdout stays the command's result.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, Protocol, TextIO

from watcher.core.text import raw_stream, shown


class Display(Protocol):
    def stage(self, text: str) -> None: ...

    def close(self) -> None: ...


_lock = threading.Lock()
_active: Display | None = None


def stage(text: str) -> None:
    """The work entered a new stage (e.g. "installing mcp 2.4.0b1"); shown if a display is on."""
    with _lock:
        display = _active
    if display is not None:
        display.stage(text)


class PlainLines:
    """One line per stage, prefixed with the command and the seconds since it started."""

    def __init__(self, command: str, stream: TextIO) -> None:
        self.command, self.stream, self.started = command, stream, time.monotonic()

    def stage(self, text: str) -> None:
        print(f"{self.command}: [{time.monotonic() - self.started:5.1f} s] {text}", file=self.stream, flush=True)

    def close(self) -> None:
        pass


class LiveStatus:
    """A spinner naming the current stage; each finished stage stays as a line with its duration."""

    def __init__(self, command: str, stream: TextIO) -> None:
        # yaspin only on a terminal: `--help` and pipes never import it (and, unlike rich, importing httpx
        # does not pull it in either).
        from yaspin import yaspin

        self.command = command
        self.current: str | None = None
        self.since = time.monotonic()
        # The spinner's own redraws are ours (past the CLI's escaping layer); a stage's text, which names
        # outside things (a version, a server), is shown with its control characters visible.
        self.spinner: Any = yaspin(text=f"{command}: starting", stream=raw_stream(stream), timer=True)
        self.spinner.start()

    def _finish_current(self) -> None:
        if self.current is not None:
            self.spinner.write(shown(f"✓ {self.current} ({time.monotonic() - self.since:.1f} s)"))

    def stage(self, text: str) -> None:
        self._finish_current()
        self.current, self.since = text, time.monotonic()
        self.spinner.text = shown(f"{self.command}: {text}")

    def close(self) -> None:
        self._finish_current()
        self.spinner.stop()


def make_display(command: str, quiet: bool, stream: TextIO | None = None) -> Display | None:
    if quiet:
        return None
    out = stream or sys.stderr
    return LiveStatus(command, out) if out.isatty() else PlainLines(command, out)


def start(command: str, quiet: bool = False, stream: TextIO | None = None) -> None:
    """Turn a display on until ``stop()`` (the service's first cycle, which ends in another thread)."""
    global _active
    display = make_display(command, quiet, stream)
    with _lock:
        _active = display


def stop() -> None:
    global _active
    with _lock:
        display, _active = _active, None
    if display is not None:
        display.close()


@contextlib.contextmanager
def showing(command: str, quiet: bool = False, stream: TextIO | None = None) -> Iterator[None]:
    """Show the stages reported while the block runs (none with `quiet`, e.g. --json)."""
    global _active
    display = make_display(command, quiet, stream)
    with _lock:
        previous, _active = _active, display
    try:
        yield
    finally:
        with _lock:
            _active = previous
        if display is not None:
            display.close()
