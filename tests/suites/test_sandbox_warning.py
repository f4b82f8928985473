"""A machine without the run boundary (runs refused under `auto`) is said once per process, not once per
run (it was five times in a service's first minutes: the start-up line, then every run and pre-build that
asked for its boundary)."""

from __future__ import annotations

import logging

import pytest

from watcher.boundary import sandbox


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    monkeypatch.setattr(sandbox, "_warned", set())


def _not_sandboxed(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "bubblewrap cannot run here" in r.getMessage()]


def test_runs_without_a_sandbox_are_warned_of_once(no_bwrap: None, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.WARNING, logger=sandbox.__name__)
    chosen = [sandbox.choose("auto") for _ in range(5)]
    assert {(c.mode, c.refused) for c in chosen} == {("off", True)}  # auto without a room refuses outside code
    assert _not_sandboxed(caplog) == [
        "suites.sandbox is auto, but bubblewrap cannot run here (bwrap is not installed (Debian package "
        "bubblewrap)): outside code is refused; set suites.sandbox: none to run it without a sandbox"
    ]


def test_after_the_start_up_line_the_runs_say_nothing_more(no_bwrap: None, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.WARNING, logger=sandbox.__name__)
    said = sandbox.self_check("auto")  # the service logs its text as "run boundary: …"
    assert "bwrap is not installed" in str(said["text"])
    for _ in range(4):
        sandbox.choose("auto")
    assert _not_sandboxed(caplog) == []
