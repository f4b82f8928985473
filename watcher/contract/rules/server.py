"""Family `server`: protocol versions, capabilities and extensions, instructions, server info
(from initialize in the legacy era, from server/discover in the modern era).

What the spec defines is the contract: each capability key is looked up in the table of the spec's dated
revisions (`watcher.spec.capabilities`) for the revision the side that declares it negotiated. A key the spec
does not define there is reported as information (no client negotiates on it); an `experimental` entry,
non-standard by definition, as dangerous when it goes or changes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules.base import Change, Compared, Rule, join_path, make_change
from watcher.contract.rules.text import INSTRUCTIONS_CHANGED
from watcher.contract.schema_diff import json_equal
from watcher.spec.capabilities import MAP, Definition, client_capability, server_capability

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
NON_SPEC_CAPABILITY_CHANGED = Rule(
    id="non_spec_capability_changed",
    family=FAMILY,
    doc="A capability key the spec does not define for the negotiated revision (e.g. a client capability such "
    "as elicitation declared by a server) appeared, went or changed: no client negotiates on it. Information.",
    breaks_clients=False,
    affects_models=False,
)
EXPERIMENTAL_CAPABILITY_REMOVED = Rule(
    id="experimental_capability_removed",
    family=FAMILY,
    doc="An entry of `experimental` is gone: non-standard, so only clients built for this server relied on it. "
    "Dangerous.",
    breaks_clients=False,
    affects_models=False,
    dangerous=True,
)
EXPERIMENTAL_CAPABILITY_CHANGED = Rule(
    id="experimental_capability_changed",
    family=FAMILY,
    doc="An entry of `experimental` changed its settings: clients built for this server may misread it. Dangerous.",
    breaks_clients=False,
    affects_models=False,
    dangerous=True,
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
    NON_SPEC_CAPABILITY_CHANGED,
    EXPERIMENTAL_CAPABILITY_REMOVED,
    EXPERIMENTAL_CAPABILITY_CHANGED,
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
        revisions = (before.get("protocolVersion"), after.get("protocolVersion"))
        yield from _compare_capabilities(
            list_name, before.get("capabilities") or {}, after.get("capabilities") or {}, revisions
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


def _compare_capabilities(
    list_name: str,
    a: dict[str, Any],
    b: dict[str, Any],
    revisions: tuple[str | None, str | None],
    trail: tuple[str, ...] = (),
) -> Iterator[Change]:
    """Capabilities as the spec defines them: a spec capability present on one side only is added/removed (its
    children are not reported again) and compared member by member; an `experimental` entry as one value; a key
    the spec does not define, as information."""
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, False), b.get(key, False)
        here = (*trail, key)
        where = join_path("capabilities", *here)
        name = ".".join(here)
        present_a, present_b = _present(va, key, len(trail)), _present(vb, key, len(trail))
        definitions = [
            server_capability(revision, here)
            for revision, present in zip(revisions, (present_a, present_b), strict=True)
            if present
        ] or [server_capability(revisions[0], here)]
        kinds = {d.kind for d in definitions}
        if any(d.below == MAP for d in definitions):
            # An open map (`experimental`): its entries, not the map, are what a client may use.
            entries_a, entries_b = (v if isinstance(v, dict) else {} for v in (va, vb))
            yield from _compare_capabilities(list_name, entries_a, entries_b, revisions, here)
        elif "defined" not in kinds and "entry" in kinds:
            yield from _experimental_entry(list_name, name, where, va, vb)
        elif "defined" not in kinds:
            if not json_equal(va, vb) and (present_a or present_b):
                hint = _not_defined_hint(definitions[0], here)
                yield make_change(NON_SPEC_CAPABILITY_CHANGED, list_name, name, where, va, vb, hint)
        elif present_a and not present_b:
            yield make_change(CAPABILITY_REMOVED, list_name, name, where, va, None)
        elif present_b and not present_a:
            yield make_change(CAPABILITY_ADDED, list_name, name, where, None, vb)
        elif isinstance(va, dict) and isinstance(vb, dict):
            yield from _compare_capabilities(list_name, va, vb, revisions, here)
        elif present_a and present_b and not json_equal(va, vb):
            yield make_change(CAPABILITY_CHANGED, list_name, name, where, va, vb)


def _experimental_entry(list_name: str, name: str, where: str, va: Any, vb: Any) -> Iterator[Change]:
    """One entry of `experimental`: present when declared at all (`{}` declares support with no settings)."""
    present_a, present_b = va not in (False, None), vb not in (False, None)
    if present_a and not present_b:
        yield make_change(EXPERIMENTAL_CAPABILITY_REMOVED, list_name, name, where, va, None)
    elif present_b and not present_a:
        yield make_change(CAPABILITY_ADDED, list_name, name, where, None, vb)
    elif present_a and present_b and not json_equal(va, vb):
        yield make_change(EXPERIMENTAL_CAPABILITY_CHANGED, list_name, name, where, va, vb)


def _not_defined_hint(definition: Definition, path: tuple[str, ...]) -> str:
    hint = f"not a server capability in spec revision {definition.revision}"
    if client_capability(definition.revision, path).kind == "defined":
        hint += f" ({'.'.join(path)} is a client capability)"
    return hint + ": no client negotiates on it"


def _is_ok(server: dict[str, Any]) -> bool:
    return bool(server.get("status", "ok") == "ok")
