"""What the operators see: `/healthz`, `/readyz` and `/metrics` (`health`), `mcp-watcher status`
(`status`), the figures both show (`figures`) and the start-up self-check (`startup_check`)."""
