"""Small real MCP servers for the contract tests (mcp SDK 2.x), run as subprocesses:

    python -m tests.contract.servers NAME [--port N]     (stdio without --port, streamable HTTP with it)

NAME: paging-shift   tools/list pages 2 at a time; while page 2 is requested the first time, a tool is
                     inserted at the front (offset cursors then repeat an entry)
      paging-expire  same, but cursors carry the list version and a stale cursor gets -32602
      auth           the tool list depends on the Authorization header (reader / admin)
      bad-header     two tools, one with an x-mcp-header on an object property (invalid since 2026-07-28)
      legacy-only    library v2 contract, refuses server/discover (a 2025-era server)
      modern-only    library v2 contract, refuses initialize (dropped legacy support)
"""

from __future__ import annotations

import argparse
from typing import Any

import mcp_types as types
from mcp.server import MCPServer
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError


def _tool(name: str, description: str = "", required: tuple[str, ...] = ("query",)) -> types.Tool:
    schema: dict[str, Any] = {"type": "object", "properties": {"query": {"type": "string"}}, "required": list(required)}
    return types.Tool(name=name, description=description or f"The {name} tool.", input_schema=schema)


async def _call_unknown(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"no tool {params.name}")], is_error=True)


def paging_server(expire: bool) -> Server:
    tools = [_tool(f"tool_{i}") for i in range(5)]
    state = {"version": 0, "changed": False}

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        cursor = params.cursor if params else None
        version, offset = (int(part) for part in cursor.split(":")) if cursor else (state["version"], 0)
        if offset == 2 and not state["changed"]:
            state["changed"] = True
            state["version"] += 1
            tools.insert(0, _tool("tool_new", "Added while a client was paging."))
        if expire and version != state["version"]:
            raise MCPError(types.INVALID_PARAMS, "cursor expired: the tool list changed")
        page = tools[offset : offset + 2]
        following = offset + 2
        next_cursor = f"{state['version']}:{following}" if following < len(tools) else None
        return types.ListToolsResult(tools=page, next_cursor=next_cursor)

    return Server("paging", on_list_tools=list_tools, on_call_tool=_call_unknown)


def auth_server() -> Server:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        headers = getattr(getattr(ctx, "request", None), "headers", None) or {}
        token = headers.get("authorization", "")
        tools = [_tool("search_books")]
        if token == "Bearer admin-token":
            tools.append(_tool("delete_book", "Delete a book from the catalog."))
        return types.ListToolsResult(tools=tools)

    return Server("auth", on_list_tools=list_tools, on_call_tool=_call_unknown)


def bad_header_server() -> Server:
    good = _tool("lookup")
    bad = _tool("filter_books")
    bad.input_schema["properties"]["filter"] = {"type": "object", "x-mcp-header": "Filter"}

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[good, bad])

    return Server("bad-header", on_list_tools=list_tools, on_call_tool=_call_unknown)


def _refusing(method: str) -> Any:
    async def refuse(ctx: Any, call_next: Any) -> Any:
        if ctx.method == method:
            raise MCPError(types.METHOD_NOT_FOUND, f"{method} is not served here")
        return await call_next(ctx)

    return refuse


def library_with_one_era(refused_method: str) -> MCPServer:
    from library_server.versions import build_server

    server = build_server("v2")
    server.middleware.append(_refusing(refused_method))
    return server


def build(name: str) -> Server | MCPServer:
    if name in ("paging-shift", "paging-expire"):
        return paging_server(expire=name == "paging-expire")
    if name == "auth":
        return auth_server()
    if name == "bad-header":
        return bad_header_server()
    if name == "legacy-only":
        return library_with_one_era("server/discover")
    if name == "modern-only":
        return library_with_one_era("initialize")
    raise SystemExit(f"unknown test server {name!r}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    server = build(args.name)
    if isinstance(server, MCPServer):
        if args.port is None:
            server.run("stdio")
        else:
            server.run("streamable-http", host="127.0.0.1", port=args.port)
        return
    import anyio
    import uvicorn
    from mcp.server.stdio import stdio_server

    if args.port is None:

        async def serve_stdio() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(serve_stdio)
    else:
        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
