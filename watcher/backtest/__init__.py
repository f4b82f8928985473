"""Backtests: replay an SDK's real release history against a team's server ("would it have warned us?")."""
