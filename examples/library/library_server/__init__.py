"""Example MCP server: a book-lookup tool through four versions (see README)."""

from __future__ import annotations

from library_server.versions import VARIANTS, build_server

__all__ = ["VARIANTS", "build_server"]
