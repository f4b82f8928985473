"""contract."""
