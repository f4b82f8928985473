"""The cluster tests run on the backtests' pinned clock (the end-to-end test replays the backtest's period)."""

from tests.backtest.conftest import _pinned_clock  # noqa: F401  (an autouse fixture, shared not copied)
