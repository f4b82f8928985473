"""The weekly deprecation digest of each team."""
