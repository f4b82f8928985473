"""Log lines go to the standard error of the moment they are written, never to a stream closed since set-up."""

from __future__ import annotations

import io
import logging
import sys

import pytest

from watcher.core.logs import setup_logging


def test_a_line_after_stderr_was_swapped_and_closed_goes_to_the_new_one(monkeypatch: pytest.MonkeyPatch) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    first, second = io.StringIO(), io.StringIO()
    try:
        monkeypatch.setattr(sys, "stderr", first)
        setup_logging("INFO")
        logging.getLogger("watcher.test").info("one")
        first.close()  # what pytest does to a test's captured output when the test ends
        monkeypatch.setattr(sys, "stderr", second)
        logging.getLogger("watcher.test").warning("two xoxb-123-secret")
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    assert "watcher.test: two [secret]" in second.getvalue()
    assert "Logging error" not in second.getvalue() and "one" not in second.getvalue()
