"""The table of the spec's dated revisions' capabilities (watcher/spec/capabilities.py), held to the dated types
the `mcp` SDK ships for the revisions it has, and the look-up the server rules use."""

from __future__ import annotations

import types
import typing
from typing import Any

import pytest
from mcp_types import _v2025_11_25, _v2026_07_28
from pydantic import BaseModel

from watcher.spec.capabilities import (
    CLIENT_CAPABILITIES,
    FLAG,
    MAP,
    OBJECT,
    REVISIONS,
    SERVER_CAPABILITIES,
    Tree,
    client_capability,
    server_capability,
    table_revision,
)

SDK_TYPES = {"2025-11-25": _v2025_11_25, "2026-07-28": _v2026_07_28}


def _tree_of(model: type[BaseModel]) -> dict[str, Any]:
    """A capabilities model of the SDK as the table writes it: members by wire name, leaves by kind."""
    tree: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        tree[field.alias or name] = _leaf_of(field.annotation)
    return tree


def _leaf_of(annotation: Any) -> Any:
    members = [a for a in typing.get_args(annotation) if a is not type(None)]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        assert len(members) == 1, annotation
        return _leaf_of(members[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _tree_of(annotation)
    if annotation is bool:
        return FLAG
    if typing.get_origin(annotation) is dict:
        _, value = typing.get_args(annotation)
        return MAP if typing.get_origin(value) is dict else OBJECT
    raise AssertionError(f"unexpected annotation {annotation!r}")


def _plain(tree: Tree | str) -> Any:
    return tree if isinstance(tree, str) else {k: _plain(v) for k, v in tree.items()}


@pytest.mark.parametrize("revision", sorted(SDK_TYPES))
def test_the_table_names_what_the_sdk_dated_server_type_names(revision: str) -> None:
    assert _plain(SERVER_CAPABILITIES[revision]) == _tree_of(SDK_TYPES[revision].ServerCapabilities)


@pytest.mark.parametrize("revision", sorted(SDK_TYPES))
def test_the_table_names_what_the_sdk_dated_client_type_names(revision: str) -> None:
    assert _plain(CLIENT_CAPABILITIES[revision]) == _tree_of(SDK_TYPES[revision].ClientCapabilities)


def test_the_reader_of_the_sdk_types_tells_the_leaves_apart() -> None:
    # A reader that called everything an object would pass the two tests above for flat trees only.
    tree = _tree_of(_v2025_11_25.ServerCapabilities)
    assert tree["tools"] == {"listChanged": FLAG}
    assert tree["experimental"] == MAP and tree["logging"] == OBJECT
    assert tree["tasks"]["requests"] == {"tools": {"call": OBJECT}}


def test_every_released_revision_the_sdk_knows_is_in_the_table() -> None:
    from mcp.types.version import KNOWN_PROTOCOL_VERSIONS

    assert set(KNOWN_PROTOCOL_VERSIONS) <= set(REVISIONS)
    assert set(CLIENT_CAPABILITIES) == set(SERVER_CAPABILITIES)


def test_completions_came_in_2025_03_26_and_tasks_left_the_core_in_2026_07_28() -> None:
    assert server_capability("2024-11-05", ("completions",)).kind == "undefined"
    assert server_capability("2025-03-26", ("completions",)).kind == "defined"
    assert server_capability("2025-11-25", ("tasks", "requests", "tools", "call")).kind == "defined"
    assert server_capability("2026-07-28", ("tasks",)).kind == "undefined"


def test_elicitation_is_a_client_capability_and_no_server_one() -> None:
    for revision in REVISIONS:
        assert server_capability(revision, ("elicitation",)).kind == "undefined"
    assert client_capability("2025-06-18", ("elicitation",)).kind == "defined"
    assert client_capability("2025-03-26", ("elicitation",)).kind == "undefined"


def test_entries_of_an_open_map_are_entries_and_members_of_a_leaf_are_undefined() -> None:
    entry = server_capability("2025-06-18", ("experimental", "io.example/feature", "deep"))
    assert (entry.kind, entry.map_name) == ("entry", "experimental")
    assert server_capability("2025-06-18", ("logging", "level")).kind == "undefined"
    assert server_capability("2025-06-18", ("tools", "listChanged", "more")).kind == "undefined"


def test_a_revision_the_table_lacks_is_read_as_the_newest_known_before_it() -> None:
    assert table_revision("2025-08-01") == "2025-06-18"
    assert table_revision("2027-03-30") == REVISIONS[-1]
    assert table_revision("DRAFT-2026-v1") == REVISIONS[-1]
    assert table_revision(None) == REVISIONS[-1]
