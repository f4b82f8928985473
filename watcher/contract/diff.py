"""Compare two snapshot directories and name every change with the rule it matches.

Reads both snapshots, pairs their protocol eras, matches list entries across versions (by key, or by
unique name for a resource whose URI moved) and hands each pair to the rule families
(`watcher.contract.rules`), which name and grade what changed.

Layouts: a single-era directory (tools.json, …, server.json) or a both-era one (legacy/ and modern/).
Both-era against both-era compares era by era; a change found identically in both eras is reported
once, with era "both". A single-era snapshot against the other era compares only what does not
depend on the era (protocol versions and capabilities are negotiated per era).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from watcher.contract.normalize import (
    ERAS,
    ERRORS_FILE,
    LISTS,
    PROFILES_DIR,
    SERVER_FILE,
    SNAPSHOT_FILES,
    CompactEntries,
    ListSpec,
    read_json,
    stream_elements,
)
from watcher.contract.report import DiffReport, report_json
from watcher.contract.rules import FAMILIES_BY_LIST, errors, evolution, lists, renames, server
from watcher.contract.rules.base import Change, Compared
from watcher.contract.schema_diff import canonical, json_equal
from watcher.core.errors import ContractError

if TYPE_CHECKING:
    from watcher.core.contract_doc import ContractDiff

LIST_ORDER = ("server", "tools", "prompts", "resources", "resource-templates", "errors")
ERA_ORDER = ("both", "legacy", "modern", None)


Entries = Mapping[str, dict[str, Any]]
"""A snapshot list's entries by key (name, uri or uriTemplate), each as the server sent it (a
`CompactEntries` when read from a file: parsed again on each look-up)."""


EntryMemo = dict[tuple[str, str, bytes, bytes], list[Change]]
"""The changes found for an entry, by (list, key, its bytes before, its bytes after): classifying depends on
nothing else, so both eras of a snapshot share the work for the entries they hold alike."""


class SnapshotError(ContractError):
    """Unusable input: a missing or malformed snapshot. The message names the path."""


@dataclass
class EraSnapshot:
    """One era of a snapshot as read from disk; lists are None when their file is absent."""

    path: Path
    era: str | None
    status: str
    lists: dict[str, Entries | None]
    server: dict[str, Any] | None
    errors: dict[str, Any] | None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def diff_snapshots(
    baseline: Path,
    candidate: Path,
    baseline_label: str | None = None,
    candidate_label: str | None = None,
    server_name: str | None = None,
    today: dt.date | None = None,
) -> ContractDiff:
    """The report's JSON form (see `watcher.contract.report`); raises SnapshotError on unusable input."""
    return report_json(compare_snapshots(baseline, candidate, baseline_label, candidate_label, server_name, today))


def compare_snapshots(
    baseline: Path,
    candidate: Path,
    baseline_label: str | None = None,
    candidate_label: str | None = None,
    server_name: str | None = None,
    today: dt.date | None = None,
) -> DiffReport:
    """Every change between two snapshot directories, client profile by profile and era by era; labels
    name the sides in the report. A change seen under any profile counts; with two or more profiles
    compared, each change says under which (`profile`)."""
    base_profiles = load_profiles(Path(baseline))
    cand_profiles = load_profiles(Path(candidate))
    notes: list[str] = []
    pairs = _pair_profiles(base_profiles, cand_profiles, notes)
    per_profile: dict[str | None, list[Change]] = {}
    compared: list[str] = []
    for name, base_path, cand_path in pairs:
        base, base_layout = load_snapshot(base_path)
        cand, cand_layout = load_snapshot(cand_path)
        per_era: dict[str | None, list[Change]] = {}
        memo: EntryMemo = {}  # an entry changed the same way in both eras is classified once
        for era_tag, b, c, era_bound in _pair_eras(base, base_layout == "both", cand, cand_layout == "both", notes):
            per_era[era_tag] = compare_era(b, c, era_bound, notes, server_name, today, memo=memo)
            label = era_tag or f"{b.era or 'unknown'} vs {c.era or 'unknown'}"
            if label not in compared:
                compared.append(label)
        per_profile[name] = _merge_eras(per_era)
    several = len(per_profile) > 1
    found = _merge_profiles(per_profile, cand_profiles) if several else next(iter(per_profile.values()))
    found.sort(key=_sort_key)
    return DiffReport(
        baseline=baseline_label if baseline_label is not None else str(baseline),
        candidate=candidate_label if candidate_label is not None else str(candidate),
        changes=tuple(c for c in found if not c.rule.lint),
        lints=tuple(c for c in found if c.rule.lint),
        eras=tuple(compared),
        notes=tuple(dict.fromkeys(notes)),  # each profile pair may say the same thing about an era
    )


# -- client profiles -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProfileSide:
    """One client profile's snapshot folder and the capabilities it declared."""

    path: Path
    capabilities: frozenset[str] | None
    """None when not recorded."""


def load_profiles(path: Path) -> dict[str | None, ProfileSide]:
    """{profile name: its folder}: the main folder (named by the profile its manifest or server.json
    records; None when neither does) and each `profiles/<name>/` folder."""
    if not path.is_dir():
        load_snapshot(path)  # raises the usual, path-naming error
    main = _recorded_profile(path)
    profiles: dict[str | None, ProfileSide] = {main[0] if main else None: ProfileSide(path, main[1] if main else None)}
    folder = path / PROFILES_DIR
    if folder.is_dir():
        for child in sorted(folder.iterdir()):
            if child.is_dir() and child.name not in profiles:
                recorded = _recorded_profile(child)
                profiles[child.name] = ProfileSide(child, recorded[1] if recorded else None)
    return profiles


def _recorded_profile(path: Path) -> tuple[str, frozenset[str]] | None:
    candidates = [path / "snapshot.json", *(path / era / SERVER_FILE for era in ERAS), path / SERVER_FILE]
    for file in candidates:
        if not file.is_file():
            continue
        record = _read_json(file)
        profile = record.get("clientProfile") if isinstance(record, dict) else None
        if isinstance(profile, dict) and isinstance(profile.get("name"), str):
            capabilities = profile.get("capabilities")
            caps = frozenset(c for c in capabilities if isinstance(c, str)) if isinstance(capabilities, list) else None
            return profile["name"], caps or frozenset()
    return None


def _pair_profiles(
    base: dict[str | None, ProfileSide], cand: dict[str | None, ProfileSide], notes: list[str]
) -> list[tuple[str | None, Path, Path]]:
    """The (profile, baseline folder, candidate folder) pairs to compare: every profile both sides took;
    two one-profile snapshots of different profiles are compared with each other (and a note says so)."""
    common = [name for name in cand if name in base]
    if not common:
        ((_, b),) = list(base.items())[:1]
        ((_, c),) = list(cand.items())[:1]
        return [(None, b.path, c.path)]
    for name in base:
        if name not in cand:
            notes.append(f"client profile {name}: not in the candidate snapshot; not compared")
    for name in cand:
        if name not in base:
            notes.append(f"client profile {name}: not in the baseline snapshot; not compared")
    return [(name, base[name].path, cand[name].path) for name in common]


def _merge_profiles(per_profile: dict[str | None, list[Change]], cand: dict[str | None, ProfileSide]) -> list[Change]:
    """Tag each change with its profile; one seen identically under several is reported once, naming all.
    A tool gone under one profile but still offered under a profile declaring more capabilities is
    `tool_requires_capability`, not `tool_removed`."""
    tagged: list[Change] = []
    for name, changes in per_profile.items():
        for change in changes:
            tagged.append(_capability_bound(change, name, cand) or dataclasses.replace(change, profile=name))
    merged: dict[str, Change] = {}
    seen_under: dict[str, list[str]] = {}
    for change in tagged:
        signature = _signature(change)
        if signature not in merged:
            merged[signature] = change
            seen_under[signature] = []
        seen_under[signature].append(str(change.profile))
    return [dataclasses.replace(change, profile=", ".join(seen_under[sig])) for sig, change in merged.items()]


def _capability_bound(change: Change, profile: str | None, cand: dict[str | None, ProfileSide]) -> Change | None:
    if change.rule is not lists.TOOL_REMOVED or profile not in cand:
        return None
    own = cand[profile].capabilities or frozenset()
    for other, side in cand.items():
        if other == profile or side.capabilities is None or not side.capabilities > own:
            continue
        if _offers_tool(side.path, change.name, change.era):
            extra = sorted(side.capabilities - own)
            return lists.requires_capability(change, profile or "", str(other), extra)
    return None


def _offers_tool(path: Path, name: str, era: str | None) -> bool:
    snapshot, _ = load_snapshot(path)
    eras = [e for e in snapshot if era in (None, "both") or e == era or e is None]
    return any(name in (snapshot[e].lists.get("tools") or {}) for e in eras)


# -- loading ---------------------------------------------------------------------------------------


def load_snapshot(path: Path) -> tuple[dict[str | None, EraSnapshot], str]:
    """({era: snapshot}, layout "both" | "single"). A single-era directory has one entry, keyed by the
    era its server.json names (None without server.json, e.g. a hand-made snapshot of lists only)."""
    if not path.exists():
        raise SnapshotError(f"{path}: no such snapshot directory")
    if not path.is_dir():
        raise SnapshotError(f"{path}: not a directory (a snapshot is a directory of JSON files)")
    manifest = path / "snapshot.json"
    # A truncated or mangled manifest means a damaged snapshot, not one to trust.
    if manifest.is_file() and not isinstance(_read_json(manifest), dict):
        raise SnapshotError(f"{manifest}: expected a JSON object (the snapshot's manifest)")
    era_dirs = {era: path / era for era in ERAS if (path / era).is_dir()}
    if era_dirs:
        return {era: _load_era(era_dir, era) for era, era_dir in era_dirs.items()}, "both"
    if not any((path / name).is_file() for name in SNAPSHOT_FILES):
        raise SnapshotError(
            f"{path}: not a snapshot directory (expected {', '.join(SNAPSHOT_FILES)} or legacy/ and modern/)"
        )
    single = _load_era(path, None)
    return {single.era: single}, "single"


def _read_json(path: Path) -> Any:
    try:
        return read_json(path)
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise SnapshotError(f"{path}: not UTF-8 text: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"{path}: line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}") from exc


def _load_era(path: Path, expected_era: str | None) -> EraSnapshot:
    server: dict[str, Any] | None = None
    server_path = path / SERVER_FILE
    if server_path.is_file():
        loaded = _read_json(server_path)
        if not isinstance(loaded, dict):
            raise SnapshotError(f"{server_path}: expected a JSON object, found {type(loaded).__name__}")
        server = loaded
    era = server.get("era") if server else expected_era
    if expected_era is not None and era != expected_era:
        raise SnapshotError(f"{server_path}: field 'era' is {era!r}, but the directory is {expected_era!r}")
    status = str(server.get("status", "ok")) if server else "ok"
    if status.startswith("error"):
        raise SnapshotError(f"{server_path}: field 'status': this era's snapshot failed ({status})")
    lists: dict[str, Entries | None] = {}
    errors = None
    if status == "ok":
        for spec in LISTS:
            lists[spec.name] = _load_list(path / spec.file, spec, required=server is not None)
        errors_path = path / ERRORS_FILE
        if errors_path.is_file():
            errors = _read_json(errors_path)
            if not isinstance(errors, dict):
                raise SnapshotError(f"{errors_path}: expected a JSON object, found {type(errors).__name__}")
    return EraSnapshot(path, era, status, lists, server, errors)


def _load_list(path: Path, spec: ListSpec, required: bool) -> Entries | None:
    if not path.is_file():
        if required:
            raise SnapshotError(f"{path}: missing (server.json says this era was snapshotted)")
        return None
    compact = _load_compact(path, spec)
    if compact is not None:
        return compact
    entries = _read_json(path)
    if not isinstance(entries, list):
        raise SnapshotError(f"{path}: expected a JSON array of {spec.name}, found {type(entries).__name__}")
    by_key: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get(spec.key), str):
            raise SnapshotError(f"{path}: entry {index}: expected an object with a string field {spec.key!r}")
        key = entry[spec.key]
        if key in by_key:
            raise SnapshotError(f"{path}: entry {index}: duplicate {spec.key} {key!r}")
        by_key[key] = entry
    return by_key


def _load_compact(path: Path, spec: ListSpec) -> CompactEntries | None:
    """The list read element by element and held compact; None for anything unusual (a file that is not
    an indent-2 array of well-formed entries, or that orjson does not read): `_load_list` then reads it
    whole, the way that names the problem."""
    try:
        elements = stream_elements(path.read_bytes())
        if elements is None:
            return None
        raw: dict[str, bytes] = {}
        for entry in elements:
            key = entry.get(spec.key) if isinstance(entry, dict) else None
            if not isinstance(key, str) or key in raw:
                return None
            raw[key] = orjson.dumps(entry)
    except (OSError, orjson.JSONDecodeError, TypeError):  # TypeError: orjson writes at most 255 levels
        return None
    return CompactEntries(raw)


# -- pairing eras ----------------------------------------------------------------------------------


def _pair_eras(
    base: dict[str | None, EraSnapshot],
    both_base: bool,
    cand: dict[str | None, EraSnapshot],
    both_cand: bool,
    notes: list[str],
) -> list[tuple[str | None, EraSnapshot, EraSnapshot, bool]]:
    if both_base and both_cand:
        pairs: list[tuple[str | None, EraSnapshot, EraSnapshot, bool]] = []
        for era in ERAS:
            if era in base and era in cand:
                pairs.append((era, base[era], cand[era], True))
            elif era in base or era in cand:
                side = "candidate" if era in base else "baseline"
                notes.append(f"{era} era: not in the {side} snapshot; not compared")
        if not pairs:
            raise SnapshotError("the two snapshots have no era in common")
        return pairs
    if both_base or both_cand:
        multi, single = (base, cand) if both_base else (cand, base)
        ((single_era, single_snap),) = single.items()
        if single_era in multi:
            chosen = single_era
        else:
            chosen = next((e for e in ("modern", "legacy") if e in multi and multi[e].ok), None) or next(iter(multi))
            notes.append(
                f"single-era snapshot ({single_era or 'era unknown'}) compared with the {chosen} era; "
                "protocol versions and capabilities are era-specific and were not compared"
            )
        era_bound = single_era == chosen
        b, c = (multi[chosen], single_snap) if both_base else (single_snap, multi[chosen])
        return [(chosen if era_bound else None, b, c, era_bound)]
    ((era_b, b),) = base.items()
    ((era_c, c),) = cand.items()
    if era_b == era_c:
        return [(era_b, b, c, True)]
    notes.append(
        f"baseline era {era_b or 'unknown'} vs candidate era {era_c or 'unknown'}: protocol versions and "
        "capabilities are era-specific and were not compared"
    )
    return [(None, b, c, False)]


# -- comparing one era -----------------------------------------------------------------------------


def compare_era(
    b: EraSnapshot,
    c: EraSnapshot,
    era_bound: bool,
    notes: list[str],
    server_name: str | None = None,
    today: dt.date | None = None,
    memo: EntryMemo | None = None,
) -> list[Change]:
    """Every change between two sides of one era pair; what one side lacks is noted, not compared."""
    changes: list[Change] = []
    if b.server is not None and c.server is not None:
        notes.extend(_handshake_notes(b.server, c.server, era_bound))
        records = Compared(list_name="server", name="server", before=b.server, after=c.server, era_bound=era_bound)
        changes.extend(server.check(records))
        changes.extend(evolution.check(records))
    elif b.server is not None or c.server is not None:
        notes.append("server.json is missing on one side; server fields were not compared")
    if not (b.ok and c.ok):
        return changes
    for spec in LISTS:
        before, after = b.lists.get(spec.name), c.lists.get(spec.name)
        if before is None or after is None:
            if before is not None or after is not None:
                notes.append(f"{spec.file} is missing on one side; {spec.name} were not compared")
            continue
        changes.extend(compare_list(spec, before, after, server_name, today, memo=memo))
    if b.errors is not None and c.errors is not None:
        changes.extend(
            errors.check(
                Compared(list_name="errors", name="errors", before=b.errors, after=c.errors, era_bound=era_bound)
            )
        )
    return changes


def _handshake_notes(before: dict[str, Any], after: dict[str, Any], era_bound: bool) -> list[str]:
    """What the report must say about how the two sides were taken: with different client-capability
    profiles (a server may list more for a client declaring roots…), or without legacy version probes."""
    notes = []
    era = before.get("era") or after.get("era") or "this"
    profiles = [_profile_label(side.get("clientProfile")) for side in (before, after)]
    if profiles[0] != profiles[1] and _is_ok(before) and _is_ok(after):
        notes.append(
            f"{era} era: snapshots taken with different client capabilities (baseline: {profiles[0]}; candidate: "
            f"{profiles[1]}); tools, prompts or resources a server offers only to some clients may differ for that "
            "reason alone"
        )
    if era_bound and _is_ok(before) and _is_ok(after):
        sides = [name for name, side in (("baseline", before), ("candidate", after)) if server.one_handshake(side)]
        if sides:
            notes.append(
                f"{era} era: supported protocol versions of the {' and '.join(sides)} come from one initialize "
                "(snapshot without version probes); protocol versions were not compared"
            )
    return notes


def _profile_label(record: Any) -> str:
    if not isinstance(record, dict):
        return "not recorded"
    capabilities = record.get("capabilities") or []
    return f"{record.get('name')} ({', '.join(capabilities) or 'none'})"


def _is_ok(record: dict[str, Any]) -> bool:
    return str(record.get("status", "ok")) == "ok"


def compare_list(
    spec: ListSpec,
    before: Entries,
    after: Entries,
    server_name: str | None = None,
    today: dt.date | None = None,
    memo: EntryMemo | None = None,
) -> list[Change]:
    """Every change in one list: entries matched across versions go to the list's families
    (`FAMILIES_BY_LIST`), entries on one side only to the lists family (new ones to the families too,
    which report what is wrong with a new entry itself)."""
    changes: list[Change] = []
    removed = {k: before[k] for k in before if k not in after}
    added = {k: after[k] for k in after if k not in before}
    for rename in renames.pair(spec.name, removed, added):
        old_entry, new_entry = removed.pop(rename.old), added.pop(rename.new)
        changes.extend(
            renames.check(
                Compared(
                    list_name=spec.name,
                    name=rename.old,
                    before={rename.old: old_entry},
                    after={rename.new: new_entry},
                    server_name=server_name,
                )
            )
        )
        # What else changed is reported under the old name: the entry its callers know. The new name had
        # no callers, so no finding may name it as if it had.
        changes.extend(_check_entry(spec.name, rename.old, old_entry, new_entry))
    if spec.name in ("resources", "resource-templates"):
        for old_key, new_key in _match_moved(removed, added):
            changes.extend(_check_entry(spec.name, old_key, removed.pop(old_key), added.pop(new_key)))
    one_side = Compared(list_name=spec.name, name=spec.name, before=removed, after=added, today=today)
    changes.extend(lists.check(one_side))
    changes.extend(evolution.check(one_side))
    for key in sorted(added):
        changes.extend(_check_entry(spec.name, key, None, added[key]))
    compact = (before, after) if isinstance(before, CompactEntries) and isinstance(after, CompactEntries) else None
    for key in sorted(set(before) & set(after)):
        seen = None
        if compact:
            raw_before, raw_after = compact[0].raw(key), compact[1].raw(key)
            if raw_before == raw_after:
                continue  # unchanged, and not parsed again
            seen = (spec.name, key, raw_before, raw_after)
            if memo is not None and seen in memo:
                changes.extend(memo[seen])
                continue
        old, new = before[key], after[key]
        if not json_equal(old, new):
            found = list(_check_entry(spec.name, key, old, new))
            if memo is not None and seen is not None:
                memo[seen] = found
            changes.extend(found)
    return changes


def _check_entry(
    list_name: str, key: str, before: dict[str, Any] | None, after: dict[str, Any] | None
) -> Iterator[Change]:
    compared = Compared(list_name=list_name, name=key, before=before, after=after)
    for family in FAMILIES_BY_LIST[list_name]:
        yield from family.check(compared)


def _match_moved(removed: Entries, added: Entries) -> list[tuple[str, str]]:
    """(old key, new key) of entries with the same `name`, unique on each side, whose key changed:
    a resource that moved to another URI is one entry, not a removal plus an addition."""

    def unique_names(entries: Entries) -> dict[str, str]:
        by_name: dict[str, list[str]] = {}
        for key, entry in entries.items():
            if isinstance(entry.get("name"), str):
                by_name.setdefault(entry["name"], []).append(key)
        return {name: keys[0] for name, keys in by_name.items() if len(keys) == 1}

    old_names, new_names = unique_names(removed), unique_names(added)
    return [(old_names[name], new_names[name]) for name in sorted(set(old_names) & set(new_names))]


def _merge_eras(per_era: dict[str | None, list[Change]]) -> list[Change]:
    """Tag each change with its era; one found identically in both eras is reported once as "both"."""
    if set(per_era) != {"legacy", "modern"}:
        return [dataclasses.replace(c, era=era) for era, changes in per_era.items() for c in changes]
    modern_left = Counter(_signature(c) for c in per_era["modern"])
    merged = []
    for change in per_era["legacy"]:
        signature = _signature(change)
        if modern_left[signature] > 0:
            modern_left[signature] -= 1
            merged.append(dataclasses.replace(change, era="both"))
        else:
            merged.append(dataclasses.replace(change, era="legacy"))
    for change in per_era["modern"]:
        signature = _signature(change)
        if modern_left[signature] > 0:
            modern_left[signature] -= 1
            merged.append(dataclasses.replace(change, era="modern"))
    return merged


def _signature(change: Change) -> str:
    """Equal for two changes that say the same thing (their era aside)."""
    fields = (
        change.rule.id,
        change.list_name,
        change.name,
        change.path,
        change.before,
        change.after,
        change.hint,
        change.era,
    )
    return canonical(fields)


def _sort_key(change: Change) -> tuple[Any, ...]:
    return (
        LIST_ORDER.index(change.list_name) if change.list_name in LIST_ORDER else len(LIST_ORDER),
        str(change.name),
        ERA_ORDER.index(change.era) if change.era in ERA_ORDER else len(ERA_ORDER),
        change.path or "",
        change.kind or "",
    )


__all__ = [
    "EraSnapshot",
    "SnapshotError",
    "compare_era",
    "compare_list",
    "compare_snapshots",
    "diff_snapshots",
    "load_snapshot",
]
