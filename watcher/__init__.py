"""mcp-watcher: warns MCP server teams before SDK betas and spec deprecations break them."""

__version__ = "0.1.0"
