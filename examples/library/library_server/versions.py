"""The four versions of the library server. Tools return fixed data: only the contract matters."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

from mcp.server import MCPServer

ISBN = "978-0-00-000000-2"
INSTRUCTIONS = "Book lookup for a small library. Use find_book for a title."


class BookV1(TypedDict):
    isbn: str


class BookV2(TypedDict):
    isbn: str
    year: int


def _base() -> MCPServer:
    """A server with the parts that every version shares: a resource, a template, a prompt."""
    server = MCPServer("library", instructions=INSTRUCTIONS)

    @server.resource("library://catalog", name="catalog", mime_type="application/json")
    def catalog() -> str:
        """The whole catalog as a JSON list of ISBNs."""
        return f'["{ISBN}"]'

    @server.resource("library://books/{isbn}", name="book", mime_type="application/json")
    def book(isbn: str) -> str:
        """One book's record by ISBN."""
        return f'{{"isbn": "{isbn}"}}'

    @server.prompt()
    def recommend(genre: str) -> str:
        """Ask for a recommendation in a genre."""
        return f"Recommend one {genre} book from the library catalog."

    return server


def v1() -> MCPServer:
    server = _base()

    @server.tool()
    def find_book(title: str) -> BookV1:
        """Look up a book by title and return its ISBN."""
        return {"isbn": ISBN}

    return server


def v2() -> MCPServer:
    server = _base()

    @server.tool(name="find_book")
    def find_book_v2(title: str, language: str = "en") -> BookV2:
        """Look up a book by title (in `language`, default English) and return its ISBN and year."""
        return {"isbn": ISBN, "year": 2019}

    return server


def v3_breaking() -> MCPServer:
    server = _base()

    @server.tool(name="find_book")
    def find_book_v3_breaking(title: str, author: str, language: str = "en") -> BookV2:
        """Look up a book by title and author and return its ISBN and year."""
        return {"isbn": ISBN, "year": 2019}

    return server


def v3() -> MCPServer:
    server = _base()

    @server.tool(name="find_book")
    def find_book_v3_old(title: str, language: str = "en") -> BookV2:
        """Deprecated: use find_book_by_author, which is exact. Kept until 2027-06-01."""
        return {"isbn": ISBN, "year": 2019}

    @server.tool()
    def find_book_by_author(title: str, author: str, language: str = "en") -> BookV2:
        """Look up a book by title and author (in `language`, default English) and return its ISBN and year."""
        return {"isbn": ISBN, "year": 2019}

    return server


VARIANTS: dict[str, Callable[[], MCPServer]] = {"v1": v1, "v2": v2, "v3-breaking": v3_breaking, "v3": v3}


def build_server(variant: str = "v3") -> MCPServer:
    try:
        return VARIANTS[variant]()
    except KeyError:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}") from None
