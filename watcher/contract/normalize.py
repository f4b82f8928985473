"""Normalization of what a server returns into the snapshot's plain, stable JSON, and reading it back.

Lists keep every entry as the server sent it, minus delivery fields, sorted by a stable key.
Files are written with sorted keys, so two snapshots of the same contract are byte-identical.
Reading is by orjson where it reads what `json` would, and a large list is held as each entry's compact
bytes (`CompactEntries`), parsed again only for the entries a diff looks into.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson


@dataclass(frozen=True, slots=True)
class ListSpec:
    """One of the four lists a snapshot records: its file, the field that identifies an entry, and how
    the server announces and returns it."""

    name: str
    """The report's `list` value and the file stem."""
    file: str
    key: str
    """The field an entry is identified by across versions."""
    result_field: str
    """The field of the list result that holds the entries."""
    capability: str
    """The server capability that announces the list."""


LISTS: tuple[ListSpec, ...] = (
    ListSpec("tools", "tools.json", "name", "tools", "tools"),
    ListSpec("resources", "resources.json", "uri", "resources", "resources"),
    ListSpec("resource-templates", "resource-templates.json", "uriTemplate", "resourceTemplates", "resources"),
    ListSpec("prompts", "prompts.json", "name", "prompts", "prompts"),
)
LIST_BY_NAME = {spec.name: spec for spec in LISTS}
SERVER_FILE = "server.json"
ERRORS_FILE = "errors.json"
MANIFEST_FILE = "snapshot.json"
SNAPSHOT_FILES = tuple(spec.file for spec in LISTS) + (SERVER_FILE, ERRORS_FILE)
ERAS = ("legacy", "modern")
"""The protocol eras a snapshot records, each in its own folder of a both-era snapshot."""
ERA_CHOICES = (*ERAS, "both")
PROFILES_DIR = "profiles"
"""Where a snapshot keeps the contract seen under its second and later client profiles (`profiles/<name>/`)."""

DELIVERY_FIELDS = frozenset({"ttlMs", "cacheScope", "nextCursor", "_meta", "resultType"})
"""Fields of a list result (and `_meta` of an entry) that describe delivery, not the contract."""


def entry_key(spec: ListSpec, entry: dict[str, Any]) -> str:
    value = entry.get(spec.key)
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def normalize_entries(spec: ListSpec, entries: list[Any]) -> list[dict[str, Any]]:
    """Entries without their `_meta`, sorted by the list's key. Schemas are kept exactly as sent."""
    cleaned = [{k: v for k, v in entry.items() if k != "_meta"} for entry in entries if isinstance(entry, dict)]
    return sorted(cleaned, key=lambda entry: entry_key(spec, entry))


def split_capabilities(capabilities: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(capabilities without `extensions`, extensions): extensions are recorded on their own."""
    capabilities = dict(capabilities or {})
    extensions = capabilities.pop("extensions", None) or {}
    return capabilities, extensions


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(value), encoding="utf-8")


# Bytes that are not digits stay; digits become b"0", so a run of 19 digits is found by `bytes.find`.
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else b for b in range(256))
_LONG_DIGITS = b"0" * 19
_SCAN_CHUNK = 1 << 20


def read_json(path: Path) -> Any:
    """`json.loads(path.read_text(encoding="utf-8"))`, read by orjson (several times faster) when orjson
    reads the same value; it raises what that expression raises, with the same messages.

    orjson refuses what `json` accepts beyond the standard (NaN, Infinity, lone surrogates), and any text
    that is not valid JSON: those are read again the standard library's way. It would read an integer
    beyond 64 bits as a float: a text with a run of 19 or more digits (such an integer, a long fraction, or
    digits in a string) goes to `json` too, which reads it exactly."""
    data = path.read_bytes()
    if not _long_digit_run(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(path.read_text(encoding="utf-8"))


def _long_digit_run(data: bytes) -> bool:
    view = memoryview(data)
    for start in range(0, len(data), _SCAN_CHUNK):
        # Overlapping by 18 bytes, a run across two chunks is still found; chunks keep the translated copy small.
        if bytes(view[start : start + _SCAN_CHUNK + 18]).translate(_DIGITS_AS_ZERO).find(_LONG_DIGITS) >= 0:
            return True
    return False


class CompactEntries(Mapping[str, dict[str, Any]]):
    """A snapshot list's entries by key, each held as its compact JSON bytes (key order kept) and parsed
    when asked for: a 10,000-tool list takes about 40 % of its file's size instead of four times it."""

    __slots__ = ("_raw",)

    def __init__(self, raw: dict[str, bytes]) -> None:
        self._raw = raw

    def __getitem__(self, key: str) -> dict[str, Any]:
        value: dict[str, Any] = orjson.loads(self._raw[key])
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def raw(self, key: str) -> bytes:
        """The entry's compact bytes: equal bytes are equal JSON (different bytes may still be the same JSON
        with its keys in another order)."""
        return self._raw[key]


_LEADING_SPACE = re.compile(rb"[ \t\n\r]*")
_ENTRY_BOUNDARY = b"\n  },\n  {"
"""Between two entries of a list written with indent 2: a raw newline is never inside a JSON string, so
this is whitespace between values (or the file is read whole)."""


def stream_elements(data: bytes) -> Iterator[Any] | None:
    """The elements of an indent-2 JSON array of objects, parsed one by one by orjson (only one is a
    Python object at a time); None when `data` is not such an array or may read otherwise than by `json`.

    A raw newline is never inside a JSON string, so each span between the boundaries is one element, and
    the array is exactly the list of them. The iterator raises orjson.JSONDecodeError for an element orjson
    does not read (NaN, a lone surrogate, a damaged file): the caller then reads the file whole."""
    spans = None if _long_digit_run(data) else _object_spans(data)
    if spans is None:
        return None
    view = memoryview(data)
    return (orjson.loads(view[start:end]) for start, end in spans)


def _object_spans(data: bytes) -> list[tuple[int, int]] | None:
    """(start, end) of each element of `[ {…},\n  {…} ]` split at the indent-2 boundaries; None when the
    text is not an array of at least one element."""
    # Found without stripping: a stripped copy of a large file would be a second copy of it.
    leading = _LEADING_SPACE.match(data)
    left, right = (leading.end() if leading else 0), len(data)
    while right > left and data[right - 1] in b" \t\n\r":
        right -= 1
    if right - left < 2 or data[left : left + 1] != b"[" or data[right - 1 : right] != b"]":
        return None
    spans, start = [], left + 1
    while True:
        found = data.find(_ENTRY_BOUNDARY, start, right - 1)
        if found < 0:
            break
        spans.append((start, found + 4))  # through the closing brace
        start = found + len(_ENTRY_BOUNDARY) - 1  # from the opening brace
    spans.append((start, right - 1))
    return spans
