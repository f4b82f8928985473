"""The capabilities each dated revision of the MCP specification defines, on the server's side and the client's.

The names are facts, read from each revision's schema (`ServerCapabilities` and `ClientCapabilities` in
`schema/<revision>/schema.ts` of the specification's repository); for the revisions whose dated types the
`mcp` SDK ships (`mcp_types._v2025_11_25`, `_v2026_07_28`) a test holds the table to those types.

A capability is a tree: a name maps to its members, or to what the leaf is — `FLAG` (a boolean such as
`listChanged`), `OBJECT` (present means supported; the spec defines nothing inside) or `MAP` (an open map of
entries named by whoever declares them: `experimental`, `extensions`). What a server declares beyond this is
not a spec capability: no client negotiates on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Leaf = Literal["flag", "object", "map"]
FLAG: Leaf = "flag"
OBJECT: Leaf = "object"
MAP: Leaf = "map"

Tree = Mapping[str, "Tree | Leaf"]

_PROMPTS: Tree = {"listChanged": FLAG}
_RESOURCES: Tree = {"subscribe": FLAG, "listChanged": FLAG}
_TOOLS: Tree = {"listChanged": FLAG}
_SERVER_2024_11_05: Tree = {
    "experimental": MAP,
    "logging": OBJECT,
    "prompts": _PROMPTS,
    "resources": _RESOURCES,
    "tools": _TOOLS,
}
_SERVER_2025_03_26: Tree = {**_SERVER_2024_11_05, "completions": OBJECT}

SERVER_CAPABILITIES: dict[str, Tree] = {
    "2024-11-05": _SERVER_2024_11_05,
    "2025-03-26": _SERVER_2025_03_26,
    "2025-06-18": _SERVER_2025_03_26,
    "2025-11-25": {
        **_SERVER_2025_03_26,
        "tasks": {"list": OBJECT, "cancel": OBJECT, "requests": {"tools": {"call": OBJECT}}},
    },
    "2026-07-28": {**_SERVER_2025_03_26, "extensions": MAP},
}
"""`ServerCapabilities` of each dated revision (2026-07-28 moved tasks into an extension)."""

_CLIENT_2024_11_05: Tree = {"experimental": MAP, "roots": {"listChanged": FLAG}, "sampling": OBJECT}
_CLIENT_2025_06_18: Tree = {**_CLIENT_2024_11_05, "elicitation": OBJECT}

CLIENT_CAPABILITIES: dict[str, Tree] = {
    "2024-11-05": _CLIENT_2024_11_05,
    "2025-03-26": _CLIENT_2024_11_05,
    "2025-06-18": _CLIENT_2025_06_18,
    "2025-11-25": {
        **_CLIENT_2024_11_05,
        "sampling": {"context": OBJECT, "tools": OBJECT},
        "elicitation": {"form": OBJECT, "url": OBJECT},
        "tasks": {
            "list": OBJECT,
            "cancel": OBJECT,
            "requests": {"sampling": {"createMessage": OBJECT}, "elicitation": {"create": OBJECT}},
        },
    },
    "2026-07-28": {
        "experimental": MAP,
        "roots": OBJECT,
        "sampling": {"context": OBJECT, "tools": OBJECT},
        "elicitation": {"form": OBJECT, "url": OBJECT},
        "extensions": MAP,
    },
}
"""`ClientCapabilities` of each dated revision: named when a server declares one of them as its own."""

REVISIONS: tuple[str, ...] = tuple(sorted(SERVER_CAPABILITIES))


@dataclass(frozen=True, slots=True)
class Definition:
    """What the spec says of one capability path in one revision."""

    revision: str
    """The revision the path was looked up in (the newest known one for a revision this table lacks)."""
    kind: Literal["defined", "entry", "undefined"]
    """defined: the spec names it; entry: an entry of an open map (`experimental.<name>`); undefined: not a
    spec capability."""
    below: Tree | Leaf | None = None
    """For a defined path: its members, or its leaf kind."""
    map_name: str | None = None
    """For an entry: the map it is in (`experimental`)."""


def table_revision(revision: str | None) -> str:
    """The table's revision for a negotiated one: itself when known, else the newest known revision before it
    (the newest known one for a string before them all or of another shape, such as a draft's)."""
    if revision in SERVER_CAPABILITIES:
        return revision
    earlier = [known for known in REVISIONS if revision and known < revision]
    return earlier[-1] if earlier else REVISIONS[-1]


def server_capability(revision: str | None, path: tuple[str, ...]) -> Definition:
    """Whether `path` (e.g. ("tools", "listChanged")) is a server capability of the revision."""
    return _look_up(SERVER_CAPABILITIES, revision, path)


def client_capability(revision: str | None, path: tuple[str, ...]) -> Definition:
    return _look_up(CLIENT_CAPABILITIES, revision, path)


def _look_up(table: dict[str, Tree], revision: str | None, path: tuple[str, ...]) -> Definition:
    known = table_revision(revision)
    node: Tree | Leaf = table[known]
    for depth, name in enumerate(path):
        if node == MAP:
            return Definition(known, "entry", map_name=path[depth - 1])
        if isinstance(node, str) or name not in node:
            return Definition(known, "undefined")
        node = node[name]
    return Definition(known, "defined", node)
