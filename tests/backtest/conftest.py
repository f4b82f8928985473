"""Every backtest test runs on a pinned clock (the answer's times and the default period come from it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.backtest.helpers import CLOCK_START
from watcher.core import clock


@pytest.fixture(autouse=True)
def _pinned_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(clock.START_VARIABLE, CLOCK_START)
    clock._offset.cache_clear()
    yield
    monkeypatch.delenv(clock.START_VARIABLE)
    clock._offset.cache_clear()
