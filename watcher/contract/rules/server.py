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


def _compare_tree(list_name: str, a: dict[str, Any], b: dict[str, Any], path: str) -> Iterator[Change]:
    """A capability present (an object, or a `true` flag) on one side only is added/removed; a `false`
    flag counts as absent. Children of a removed capability are not reported again."""
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, False), b.get(key, False)
        where = join_path(path, key)
        name = where.split(".", 1)[1]
        present_a = va is not False and va is not None
        present_b = vb is not False and vb is not None
        if present_a and not present_b:
            yield make_change(CAPABILITY_REMOVED, list_name, name, where, va, None)
        elif present_b and not present_a:
            yield make_change(CAPABILITY_ADDED, list_name, name, where, None, vb)
        elif isinstance(va, dict) and isinstance(vb, dict):
            yield from _compare_tree(list_name, va, vb, where)
        elif not json_equal(va, vb):
            yield make_change(CAPABILITY_CHANGED, list_name, name, where, va, vb)


def _is_ok(server: dict[str, Any]) -> bool:
    return bool(server.get("status", "ok") == "ok")
