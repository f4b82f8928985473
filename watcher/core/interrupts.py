"""SIGINT and SIGTERM as terminals, supervisors and CI timeouts send them: often to the main process alone.

Python turns SIGINT into KeyboardInterrupt only when SIGINT was not ignored when it started, and a process that
a script starts in the background (`cmd &`, `nohup`) inherits it ignored. SIGTERM's default ends the process on
the spot, with no cleanup, while its children (each leading a process group of its own) live on. So the CLI
installs both handlers itself (`handled`), whatever it inherited:

- outside a long command's work, a signal raises KeyboardInterrupt, as Python's own SIGINT handler does;
- inside it (`cooperative`), the first signal sets the command's stop event: its stages cancel what they
  started, and the command reports what it did not finish. A watchdog makes "within seconds" hold whatever a
  stage is waiting for: after STOP_CHILDREN_AFTER seconds it stops the children still running (`force`, given
  by the caller), after EXIT_AFTER seconds it ends the process. A second signal does both at once.

An interrupted command exits with 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)
STOP_CHILDREN_AFTER = 5.0
"""Seconds after the first signal: the children still running are stopped (their stage did not stop them)."""
EXIT_AFTER = 15.0
"""Seconds after the first signal: the process ends, whatever its work is still waiting for."""


def exit_code(signum: int) -> int:
    """The exit status of a command a signal interrupted (the shell's convention): 130 SIGINT, 143 SIGTERM."""
    return 128 + signum


@dataclass
class _State:
    signum: int | None = None
    """The first signal received since `handled` began."""
    count: int = 0
    stop: threading.Event | None = None
    """The stop event of the long command's work under way (None: a signal raises KeyboardInterrupt)."""
    label: str = ""
    force: Callable[[], object] = lambda: None
    wake: threading.Event = field(default_factory=threading.Event)


_state = _State()


def received() -> int | None:
    """The first signal received while the handlers were installed (None: none)."""
    return _state.signum


def _on_signal(signum: int, frame: FrameType | None) -> None:
    state = _state
    state.count += 1
    if state.signum is None:
        state.signum = signum
    if state.stop is None:
        raise KeyboardInterrupt
    state.stop.set()
    state.wake.set()


@contextlib.contextmanager
def handled(force: Callable[[], object] | None = None) -> Iterator[None]:
    """SIGINT and SIGTERM handled by this module while the block runs (the previous handlers come back after).
    `force` stops every child still running (the watchdog's last resort). Only the main thread can install
    handlers: elsewhere (a command called from a test's thread) this does nothing."""
    global _state
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
    _state = _State(force=force or (lambda: None))
    for sig in SIGNALS:
        signal.signal(sig, _on_signal)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


@contextlib.contextmanager
def cooperative(stop: threading.Event, label: str) -> Iterator[None]:
    """A long command's work: while it runs, a signal sets `stop` (the work's stages watch it) instead of
    raising, and the watchdog bounds how long stopping may take. `label` names the command in what it says."""
    state = _state
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    done = threading.Event()
    state.stop, state.label = stop, label
    watchdog = threading.Thread(target=_watch, args=(state, done), name="interrupts", daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        state.stop = None
        done.set()
        state.wake.set()
        watchdog.join(timeout=1.0)
        if state.signum is not None:
            state.force()  # whatever the stages left running (normally nothing)


def interrupted(label: str, what: str) -> int | None:
    """After a long command's work: when a signal interrupted it, say so (with `what` it means for the user)
    on stderr and return the exit status; None when no signal came."""
    signum = _state.signum
    if signum is None:
        return None
    _say(f"mcp-watcher {label}: interrupted by {signal.Signals(signum).name}: {what}")
    return exit_code(signum)


def _say(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)


def _watch(state: _State, done: threading.Event) -> None:
    """Runs beside the work: says that a signal came, and bounds the time the work takes to stop."""
    # Never this thread's to receive: the kernel hands the signals to a thread that runs Python handlers.
    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    while not done.is_set() and state.signum is None:
        state.wake.wait()
        state.wake.clear()
    if done.is_set() or state.signum is None:
        return
    name = signal.Signals(state.signum).name
    _say(f"mcp-watcher {state.label}: {name} received: stopping (a second signal stops at once)")
    since, children_stopped = time.monotonic(), False
    while not done.wait(0.1):
        waited = time.monotonic() - since
        if not children_stopped and (state.count > 1 or waited >= STOP_CHILDREN_AFTER):
            children_stopped = True
            with contextlib.suppress(Exception):
                state.force()
        if state.count > 1 or waited >= EXIT_AFTER:
            _say(f"mcp-watcher {state.label}: stopped by {name} (the work was still winding down)")
            os._exit(exit_code(state.signum))
