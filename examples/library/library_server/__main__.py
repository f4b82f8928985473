"""`python -m library_server [--variant V] [--port N]`: stdio without --port, streamable HTTP with it."""

from __future__ import annotations

import argparse

from library_server.versions import VARIANTS, build_server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="library_server", description=__doc__)
    parser.add_argument("--variant", choices=list(VARIANTS), default="v3")
    parser.add_argument("--port", type=int, help="serve streamable HTTP on 127.0.0.1:PORT at /mcp")
    args = parser.parse_args(argv)
    server = build_server(args.variant)
    if args.port is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port, streamable_http_path="/mcp")


if __name__ == "__main__":
    main()
