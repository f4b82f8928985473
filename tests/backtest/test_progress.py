"""The progress display: a redrawn status line on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io

from watcher.backtest.progress import TerminalProgress
from watcher.core.text import ShownStream


def test_plain_lines_when_not_a_terminal():
    out = io.StringIO()
    progress = TerminalProgress(out, tty=False)
    progress.begin("notes", 3, 1)
    progress.finished(1, 3, "1.27.2", "pass", 0.0, True)
    progress.started(2, 3, "2.0.0a1")
    progress.finished(2, 3, "2.0.0a1", "fail", 6.25, False)
    progress.end("interrupted", 65)
    assert out.getvalue().splitlines() == [
        "backtest notes: 3 version(s), 1 already known",
        "[1/3] 1.27.2: pass (reused)",
        "[2/3] 2.0.0a1: running",
        "[2/3] 2.0.0a1: fail (6.2 s)",
        "backtest notes: interrupted in 1:05",
    ]
    assert "\r" not in out.getvalue()


def test_one_redrawn_status_line_on_a_terminal():
    out = io.StringIO()
    progress = TerminalProgress(out, tty=True)
    progress.begin("notes", 2, 0)
    progress.started(1, 2, "2.0.0a1")
    progress.finished(1, 2, "2.0.0a1", "fail", 6.0, False)
    progress.end("done", 7)
    text = out.getvalue()
    assert "\r\x1b[2Kbacktest notes: 0/2 done (0 reused) · running 2.0.0a1 0:00 · 0:00 elapsed" in text
    assert "[1/2] 2.0.0a1: fail (6.0 s)\n" in text
    assert text.endswith("\r\x1b[2Kbacktest notes: done in 0:07\n")


def test_on_the_cli_terminal_our_redraws_pass_and_a_versions_escapes_are_shown():
    raw = io.StringIO()
    progress = TerminalProgress(ShownStream(raw), tty=True)  # type: ignore[arg-type]  (as the CLI wraps stderr)
    hostile = "2.0.0a1\x1b]0;owned\x07"
    progress.begin("notes", 1, 0)
    progress.started(1, 1, hostile)
    progress.finished(1, 1, hostile, "fail", 6.0, False)
    progress.end("done", 7)
    text = raw.getvalue()
    assert "[1/1] 2.0.0a1\\x1b]0;owned\\x07: fail (6.0 s)\n" in text  # the registry's name, shown
    assert "\x1b]" not in text and "\x07" not in text
    assert text.endswith("\r\x1b[2Kbacktest notes: done in 0:07\n")  # our own redraw, sent
