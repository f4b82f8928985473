"""Servers declared in the teams' own repositories (`.mcp-watcher.yaml`), read from the commit a run uses."""
