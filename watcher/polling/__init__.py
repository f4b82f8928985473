"""Polling the SDK sources: one poll of every source (`poll`), how often each is polled (`cadence`), and
the operator notice for a source that keeps failing (`alerts`)."""
