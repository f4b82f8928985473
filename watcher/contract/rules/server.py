"""Family `server`: protocol versions, capabilities and extensions, instructions, server info
(from initialize in the legacy era, from server/discover in the modern era)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules.base import Change, Compared, Rule, join_path, make_change
from watcher.contract.rules.text import INSTRUCTIONS_CHANGED
from watcher.contract.schema_diff import json_equal

FAMILY = "server"
PROTOCOL_VERSION_REMOVED = Rule(
    id="protocol_version_removed",
    family=FAMILY,
    doc="A protocol version (or a whole era) is no longer supported: clients on it cannot connect.",
    breaks_clients=True,
    affects_models=False,
)
PROTOCOL_VERSION_ADDED = Rule(
    id="protocol_version_added",
    family=FAMILY,
    doc="A protocol version (or era) became supported.",
    breaks_clients=False,
    affects_models=False,
)
CAPABILITY_REMOVED = Rule(
    id="capability_removed",
    family=FAMILY,
    doc="A capability, sub-capability (listChanged, subscribe…) or extension is gone: clients fall back or get errors.",
    breaks_clients=True,
    affects_models=False,
)
CAPABILITY_ADDED = Rule(
    id="capability_added",
    family=FAMILY,
    doc="A capability, sub-capability or extension appeared.",
    breaks_clients=False,
    affects_models=False,
)
CAPABILITY_CHANGED = Rule(
    id="capability_changed",
    family=FAMILY,
    doc="A capability's or extension's settings value changed.",
    breaks_clients=False,
    affects_models=False,
)
SERVER_INFO_CHANGED = Rule(
    id="server_info_changed",
    family=FAMILY,
    doc="serverInfo (name, version, title…) changed.",
    breaks_clients=False,
    affects_models=False,
)

RULES = (
    PROTOCOL_VERSION_REMOVED,
    PROTOCOL_VERSION_ADDED,
    CAPABILITY_REMOVED,
    CAPABILITY_ADDED,
    CAPABILITY_CHANGED,
    SERVER_INFO_CHANGED,
)


def check(compared: Compared) -> Iterator[Change]:
    """Compare the server.json records. An era one side could not speak is reported as its protocol
    versions removed or added. Across eras (`compared.era_bound` False) versions and capabilities,
    negotiated per era, are not compared; instructions and server info are."""
    before: dict[str, Any] = compared.before
    after: dict[str, Any] = compared.after
    list_name = compared.list_name
    era_bound = compared.era_bound
    ok_before, ok_after = _is_ok(before), _is_ok(after)
    if ok_before and not ok_after:
        for version in before.get("supportedVersions") or [before.get("protocolVersion")]:
            if version:
                yield make_change(
                    PROTOCOL_VERSION_REMOVED,
                    list_name,
                    version,
                    "supportedVersions",
                    version,
                    None,
                    f"{before.get('era', 'this')} era: {after.get('status')}",
                )
        return
    if ok_after and not ok_before:
        for version in after.get("supportedVersions") or [after.get("protocolVersion")]:
            if version:
                yield make_change(
                    PROTOCOL_VERSION_ADDED,
                    list_name,
                    version,
                    "supportedVersions",
                    None,
                    version,
                    f"{after.get('era', 'this')} era now supported",
                )
        return
    if not ok_before:
        return
    if era_bound:
        versions_a = set(before.get("supportedVersions") or [])
        versions_b = set(after.get("supportedVersions") or [])
        if one_handshake(before) or one_handshake(after):
            # One legacy handshake names the revision the server prefers, not all it accepts: a version
            # "missing" from it proves nothing (diff.py notes that the versions were not compared).
            versions_a = versions_b = set()
        for version in sorted(versions_a - versions_b):
            yield make_change(PROTOCOL_VERSION_REMOVED, list_name, version, "supportedVersions", version, None)
        for version in sorted(versions_b - versions_a):
            yield make_change(PROTOCOL_VERSION_ADDED, list_name, version, "supportedVersions", None, version)
        yield from _compare_tree(
            list_name, before.get("capabilities") or {}, after.get("capabilities") or {}, "capabilities"
        )
        yield from _compare_tree(list_name, before.get("extensions") or {}, after.get("extensions") or {}, "extensions")
    if not json_equal(before.get("instructions"), after.get("instructions")):
        yield make_change(
            INSTRUCTIONS_CHANGED,
            list_name,
            "instructions",
            "instructions",
            before.get("instructions"),
            after.get("instructions"),
        )
    info_a, info_b = before.get("serverInfo") or {}, after.get("serverInfo") or {}
    for key in sorted(set(info_a) | set(info_b)):
        if not json_equal(info_a.get(key), info_b.get(key)):
            yield make_change(
                SERVER_INFO_CHANGED, list_name, "serverInfo", f"serverInfo.{key}", info_a.get(key), info_b.get(key)
            )


def one_handshake(server: dict[str, Any]) -> bool:
    """A legacy-era record whose supported versions come from a single initialize (no probes)."""
    return server.get("era", "legacy") == "legacy" and server.get("supportedVersionsSource") == "initialize"


EMPTY_MEANS_ABSENT = frozenset({"experimental"})
"""Capabilities that only contain others: with nothing inside they declare nothing a client can use."""


def _present(value: Any, key: str, depth: int) -> bool:
    """A capability counts when it is an object or a `true` flag; a `false` flag counts as absent, and so
    does an empty object that only holds members (`experimental: {}`, or one below the top level)."""
    if value is False or value is None:
        return False
    return not (value == {} and (depth > 0 or key in EMPTY_MEANS_ABSENT))


def _compare_tree(list_name: str, a: dict[str, Any], b: dict[str, Any], path: str, depth: int = 0) -> Iterator[Change]:
    """A capability present on one side only (see `_present`) is added/removed. Children of a removed
    capability are not reported again."""
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, False), b.get(key, False)
        where = join_path(path, key)
        name = where.split(".", 1)[1]
        present_a = _present(va, key, depth)
        present_b = _present(vb, key, depth)
        if present_a and not present_b:
            yield make_change(CAPABILITY_REMOVED, list_name, name, where, va, None)
        elif present_b and not present_a:
            yield make_change(CAPABILITY_ADDED, list_name, name, where, None, vb)
        elif isinstance(va, dict) and isinstance(vb, dict):
            yield from _compare_tree(list_name, va, vb, where, depth + 1)
        elif not present_a and not present_b:
            continue
        elif not json_equal(va, vb):
            yield make_change(CAPABILITY_CHANGED, list_name, name, where, va, vb)


def _is_ok(server: dict[str, Any]) -> bool:
    return bool(server.get("status", "ok") == "ok")
