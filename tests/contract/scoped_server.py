"""Test fixture: a stdio MCP server (mcp 2.x) configured only through its environment, as many published ones are.

    python tests/contract/scoped_server.py

- without SCOPED_API_TOKEN it prints "Please set SCOPED_API_TOKEN" on stderr and exits 1;
- a token starting with "revoked-" is refused the way careless servers do it: echoed on stderr, exit 1;
- SCOPED_SCOPE decides the tools: "catalog:read" (default) lists search_books, "catalog:admin" adds delete_book.

It never prints a token it accepts. Runs as a script (no PYTHONPATH needed): the snapshot CLI gives a
stdio server only the SDK's safe variables and the ones named on its command line.
"""

from __future__ import annotations

import os
import sys

from mcp.server import MCPServer


def main() -> None:
    token = os.environ.get("SCOPED_API_TOKEN")
    if not token:
        print("Please set SCOPED_API_TOKEN (and SCOPED_SCOPE) before starting the scoped server", file=sys.stderr)
        raise SystemExit(1)
    if token.startswith("revoked-"):
        print(f"token {token} was revoked", file=sys.stderr)
        raise SystemExit(1)
    scope = os.environ.get("SCOPED_SCOPE", "catalog:read")
    server = MCPServer("scoped")

    @server.tool()
    def search_books(query: str) -> str:
        """Search the catalog."""
        return query

    if scope == "catalog:admin":

        @server.tool()
        def delete_book(book_id: str) -> str:
            """Delete a book from the catalog."""
            return book_id

    server.run("stdio")


if __name__ == "__main__":
    main()
