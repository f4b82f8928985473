"""Family `server`: protocol versions, capabilities and extensions, instructions, server info
(from initialize in the legacy era, from server/discover in the modern era)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules.base import Rule, join_path, make_change
from watcher.contract.rules.text import INSTRUCTIONS_CHANGED
from watcher.contract.schema_diff import json_equal

F = "server"
PROTOCOL_VERSION_REMOVED = Rule(
    "protocol_version_removed",
    F,
    "A protocol version (or a whole era) is no longer supported: clients on it cannot connect.",
    True,
    False,
)
PROTOCOL_VERSION_ADDED = Rule(
    "protocol_version_added", F, "A protocol version (or era) became supported.", False, False
)
CAPABILITY_REMOVED = Rule(
    "capability_removed",
    F,
    "A capability, sub-capability (listChanged, subscribe…) or extension is gone: clients fall back or get errors.",
    True,
    False,
)
CAPABILITY_ADDED = Rule("capability_added", F, "A capability, sub-capability or extension appeared.", False, False)
CAPABILITY_CHANGED = Rule(
    "capability_changed", F, "A capability's or extension's settings value changed.", False, False
)
SERVER_INFO_CHANGED = Rule("server_info_changed", F, "serverInfo (name, version, title…) changed.", False, False)

RULES = (
    PROTOCOL_VERSION_REMOVED,
    PROTOCOL_VERSION_ADDED,
    CAPABILITY_REMOVED,
    CAPABILITY_ADDED,
    CAPABILITY_CHANGED,
    SERVER_INFO_CHANGED,
)

LIST = "server"


def is_ok(server: dict[str, Any]) -> bool:
    return server.get("status", "ok") == "ok"


def compare_server(before: dict[str, Any], after: dict[str, Any], era_bound: bool = True) -> Iterator[dict[str, Any]]:
    """`era_bound=False` when the two sides were taken in different eras: versions and capabilities are
    negotiated per era, so only the era-independent fields are compared."""
    ok_before, ok_after = is_ok(before), is_ok(after)
    if ok_before and not ok_after:
        for version in before.get("supportedVersions") or [before.get("protocolVersion")]:
            if version:
                yield make_change(
                    PROTOCOL_VERSION_REMOVED,
                    LIST,
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
                    LIST,
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
        for version in sorted(versions_a - versions_b):
            yield make_change(PROTOCOL_VERSION_REMOVED, LIST, version, "supportedVersions", version, None)
        for version in sorted(versions_b - versions_a):
            yield make_change(PROTOCOL_VERSION_ADDED, LIST, version, "supportedVersions", None, version)
        yield from _compare_tree(before.get("capabilities") or {}, after.get("capabilities") or {}, "capabilities")
        yield from _compare_tree(before.get("extensions") or {}, after.get("extensions") or {}, "extensions")
    if not json_equal(before.get("instructions"), after.get("instructions")):
        yield make_change(
            INSTRUCTIONS_CHANGED,
            LIST,
            "instructions",
            "instructions",
            before.get("instructions"),
            after.get("instructions"),
        )
    info_a, info_b = before.get("serverInfo") or {}, after.get("serverInfo") or {}
    for key in sorted(set(info_a) | set(info_b)):
        if not json_equal(info_a.get(key), info_b.get(key)):
            yield make_change(
                SERVER_INFO_CHANGED, LIST, "serverInfo", f"serverInfo.{key}", info_a.get(key), info_b.get(key)
            )


def _compare_tree(a: dict[str, Any], b: dict[str, Any], path: str) -> Iterator[dict[str, Any]]:
    """A capability present (an object, or a `true` flag) on one side only is added/removed; a `false`
    flag counts as absent. Children of a removed capability are not reported again."""
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, False), b.get(key, False)
        where = join_path(path, key)
        name = where.split(".", 1)[1]
        present_a = va is not False and va is not None
        present_b = vb is not False and vb is not None
        if present_a and not present_b:
            yield make_change(CAPABILITY_REMOVED, LIST, name, where, va, None)
        elif present_b and not present_a:
            yield make_change(CAPABILITY_ADDED, LIST, name, where, None, vb)
        elif isinstance(va, dict) and isinstance(vb, dict):
            yield from _compare_tree(va, vb, where)
        elif not json_equal(va, vb):
            yield make_change(CAPABILITY_CHANGED, LIST, name, where, va, vb)
