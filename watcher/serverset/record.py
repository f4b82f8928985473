"""What the state remembers of every server the service has run with: where it is defined (the central file or a
team repository), its definition, since when, and when it was retired.

The record decides who owns a name. The first owner by record keeps it: a second repository that declares a
server of that name is refused for that server only, and a retired server's name stays reserved to the
repository that last declared it. The central file's servers are the operators' and always keep their names.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import TypeAlias

from pydantic import JsonValue

from watcher.core.store import Store
from watcher.suites.settings import Server
from watcher.suites.source.checkout import display_url

KV = "serverset:record"
RETIRED_KV = "serverset:retired"
CENTRAL = "central"
"""The origin of a server the central file defines (every other origin is a repository's git address)."""


Definition: TypeAlias = dict[str, JsonValue]
"""A server's definition as JSON (its settings' JSON dump): stored, fingerprinted and compared key by key."""


def definition(server: Server) -> Definition:
    """A server's definition as written: everything but the commit its code is read from (a new commit is new
    code, run at the next run, not a new definition)."""
    data = server.model_dump(mode="json")
    source = data.get("source")
    if isinstance(source, dict):
        source.pop("ref", None)
    return data


def fingerprint(data: Definition) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def origin_name(origin: str) -> str:
    """An origin as people read it: "the central config" or the repository's address without credentials."""
    return "the central config" if origin == CENTRAL else display_url(origin)


@dataclass
class ServerEntry:
    name: str
    team: str
    origin: str
    """CENTRAL, or the git address of the repository whose team file declares it."""
    where: str
    """The file (and line) it was last read from, for messages."""
    definition: Definition
    since: str
    """When it (last) appeared."""
    retired: str | None = None
    """When it left the set (its runs are kept; it is off the matrix); None while it is in use."""


@dataclass
class ServerRecord:
    entries: dict[str, ServerEntry] = field(default_factory=dict)
    taken: bool = False
    """Whether the set was ever recorded (False: this is the service's first look at it)."""

    @classmethod
    def load(cls, store: Store) -> ServerRecord:
        stored = store.get_kv(KV)
        if not isinstance(stored, dict):
            return cls()
        known = ServerEntry.__dataclass_fields__
        entries = {
            name: ServerEntry(**{k: v for k, v in entry.items() if k in known})
            for name, entry in (stored.get("servers") or {}).items()
            if isinstance(entry, dict)
        }
        return cls(entries, True)

    def save(self, store: Store) -> None:
        store.set_kv(KV, {"servers": {name: asdict(entry) for name, entry in sorted(self.entries.items())}})
        retired = [{"name": e.name, "team": e.team, "origin": e.origin, "retired": e.retired} for e in self.retired()]
        store.set_kv(RETIRED_KV, retired)  # what the page shows, without reading every definition
        self.taken = True

    def active(self) -> list[ServerEntry]:
        return [e for e in self.entries.values() if e.retired is None]

    def retired(self) -> list[ServerEntry]:
        return sorted((e for e in self.entries.values() if e.retired), key=lambda e: e.retired or "", reverse=True)


@dataclass(frozen=True)
class Retired:
    name: str
    team: str
    origin: str
    retired: str


def retired_servers(store: Store) -> list[Retired]:
    """The retired servers, newest first (kept beside the record for the page and `status`)."""
    return [Retired(**r) for r in store.get_kv(RETIRED_KV) or [] if isinstance(r, dict)]


def claim_refusal(
    record: ServerRecord, claimed: dict[str, tuple[str, str]], git: str, name: str, where: str
) -> str | None:
    """Why the repository ``git`` may not declare a server called ``name`` (None: it may), said for its team.

    ``claimed`` maps the names already given out in this pass (the central file's first, then each repository
    read before this one) to (origin, where). The central file always keeps its names; otherwise the owner by
    record keeps a name, in use or retired (a name retired from the central file is free: a server moved into
    a team file); a name nobody owns yet goes to the first repository read."""
    taken = claimed.get(name)
    if taken is not None and taken[0] == CENTRAL:
        return (
            f"{where}: servers: server {name!r} is also defined in {taken[1]} (the central config); "
            "a server is defined in one place: rename it in this file"
        )
    owner = record.entries.get(name)
    moved_out = owner is not None and owner.origin == CENTRAL and owner.retired  # the operators gave it up
    if owner is not None and owner.origin != git and not moved_out:
        held = (
            f"was declared by {origin_name(owner.origin)} until it was retired on {owner.retired[:10]}; a retired "
            "name stays reserved to its last repository"
            if owner.retired
            else f"belongs to {origin_name(owner.origin)} (declared there since {owner.since[:10]}, {owner.where})"
        )
        return f"{where}: servers: server {name!r} {held}; this file's entry is not used: rename it here"
    if taken is not None and taken[0] != git:
        return (
            f"{where}: servers: server {name!r} is also declared in {origin_name(taken[0])} ({taken[1]}), read first; "
            "this file's entry is not used: rename it here"
        )
    return None
