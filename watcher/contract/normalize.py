"""Normalization of what a server returns into the snapshot's plain, stable JSON.

Lists keep every entry as the server sent it, minus delivery fields, sorted by a stable key.
Files are written with sorted keys, so two snapshots of the same contract are byte-identical.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


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
