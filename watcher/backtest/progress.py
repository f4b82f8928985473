"""The progress display while a backtest runs: which version, how far, how long.

On a terminal one status line is redrawn every second; anywhere else (a log, a pipe, CI) one plain line
per event. It writes to stderr, so `--json` and `--format markdown` keep stdout to themselves.
"""

from __future__ import annotations

import threading
import time
from typing import TextIO

from watcher.core.text import raw_stream


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


class TerminalProgress:
    def __init__(self, out: TextIO, tty: bool | None = None) -> None:
        self.out = out
        self.controls = raw_stream(out)
        """Where the line-redrawing sequences go (ours); the versions' names, from a registry, go to `out`."""
        self.tty = out.isatty() if tty is None else tty
        self.began = time.monotonic()
        self.server = ""
        self.total = 0
        self.done = 0
        self.reused = 0
        self.current: dict[str, float] = {}
        self._lock = threading.Lock()
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    def _say(self, line: str) -> None:
        with self._lock:
            if self.tty:
                self._clear()
                self.out.write(line)
            else:
                self.out.write(line + "\n")
            self.out.flush()

    def _clear(self) -> None:
        """Back to the start of the status line, erased (ours: written past the terminal's escaping layer)."""
        self.controls.write("\r\x1b[2K")
        self.controls.flush()

    def _status(self) -> str:
        now = time.monotonic()
        running = ", ".join(f"{v} {_clock(now - t)}" for v, t in self.current.items()) or "–"
        return (
            f"backtest {self.server}: {self.done}/{self.total} done ({self.reused} reused) · "
            f"running {running} · {_clock(now - self.began)} elapsed"
        )

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            self._say(self._status())

    def begin(self, server: str, total: int, reused: int) -> None:
        self.server, self.total = server, total
        if not self.tty:
            self._say(f"backtest {server}: {total} version(s), {reused} already known")
        else:
            self._ticker = threading.Thread(target=self._tick, name="backtest-progress", daemon=True)
            self._ticker.start()

    def started(self, index: int, total: int, version: str) -> None:
        self.current[version] = time.monotonic()
        self._say(self._status() if self.tty else f"[{index}/{total}] {version}: running")

    def finished(self, index: int, total: int, version: str, verdict: str, seconds: float, reused: bool) -> None:
        self.current.pop(version, None)
        self.done += 1
        self.reused += int(reused)
        how = "reused" if reused else f"{seconds:.1f} s"
        if self.tty:
            self._clear()
        self.out.write(f"[{index}/{total}] {version}: {verdict} ({how})\n")
        self.out.flush()
        if self.tty:
            self._say(self._status())

    def end(self, status: str, seconds: float) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2)
        if self.tty:
            self._clear()
        self.out.write(f"backtest {self.server}: {status} in {_clock(seconds)}\n")
        self.out.flush()
