"""The `http` section: where the status pages and health endpoints listen, and who may read them."""

from __future__ import annotations

from pydantic import Field

from watcher.core.configfile import StrictModel


class HttpEndpoint(StrictModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    enabled: bool = True
    auth_token_env: str | None = "MCP_WATCHER_PAGE_TOKEN"
    """Where the status pages' token is read from on a non-loopback host (never from the YAML)."""
    auth_token_file: str | None = None
    public: bool = False
    """True: serve the status pages on a non-loopback host without a token (a deliberate choice)."""
    metrics_need_token: bool = False
    """True: /metrics asks for the token too where the pages do (/healthz and /readyz never do)."""
    public_url: str | None = Field(default=None, pattern=r"^https?://")
    """Where people reach the pages (e.g. https://watcher.example.org): Slack buttons link there."""
