"""Moves the wall clock of every Python process started with this folder on PYTHONPATH.

Used by tests/test_clock_independence.py: with ``MCP_WATCHER_TEST_WALL_CLOCK`` set (an ISO date-time),
the test process and every Python child it starts (the service, servers) see that instant as "now",
running on from there; monotonic clocks, which time-outs use, are left alone.
"""

import os

_start = os.environ.get("MCP_WATCHER_TEST_WALL_CLOCK")
if _start:
    import time_machine

    time_machine.travel(_start, tick=True).start()
