"""Accepts made in Slack and the server's accept file as one list to the diff.

The file's entries come first, so where both match a change the file's is used; a Slack entry naming the
same change as a file entry (same rule, list, name and path) is left out and reported as shadowed. Slack
entries are ordinary accept entries (validated the same way), so an expired one is reported exactly like
an expired file entry, and one that matched nothing is listed as stale.

A run reads the Slack entries from the state database read-only (it never migrates or writes the service's
state); a state it cannot read costs the run only its Slack entries, said in a note on the diff.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from watcher.config import LoadedConfig
from watcher.contract.accept import AcceptEntry, AcceptFile
from watcher.core.contract_doc import Acceptance, ContractDiff, SlackAcceptance, SlackAcceptLabel
from watcher.core.errors import StateError
from watcher.core.store_decisions import read_slack_accept_rows
from watcher.decisions.records import SlackAccept, accepts_of

log = logging.getLogger(__name__)

SLACK_SOURCE = "Slack"


@dataclass(frozen=True)
class Merged:
    accept: AcceptFile
    from_slack: int
    """How many Slack entries are in the list."""
    shadowed: list[SlackAcceptLabel]
    """Slack entries left out because the file names the same change (the file wins)."""
    unread: str | None = None
    """Why the Slack entries could not be read from the state database (None: they were, or there are none)."""
    listed: tuple[SlackAcceptLabel, ...] = ()
    """The Slack entries in the list (label, by, expires): the report names them."""

    def notes(self) -> list[str]:
        shadowed = [
            f"Slack accept of {s['label']} by {s['by']} not used: the accept file names the same change (the file wins)"
            for s in self.shadowed
        ]
        return [f"Slack accepts not used: {self.unread}", *shadowed] if self.unread else shadowed


def _identity(entry: AcceptEntry) -> tuple[str, str, str, str | None]:
    return entry.rule, entry.list_name, entry.name, entry.path


def merge(file: AcceptFile | None, slack: list[SlackAccept]) -> Merged:
    file_entries = file.entries if file is not None else ()
    named = {_identity(e) for e in file_entries}
    kept: list[AcceptEntry] = []
    shadowed: list[SlackAcceptLabel] = []
    for item in slack:
        try:
            entry = AcceptEntry.model_validate(item.entry)
        except ValueError:
            continue  # a rule id this version no longer knows: the entry cannot match anything
        if _identity(entry) in named:
            shadowed.append({"label": entry.label(), "by": entry.by or item.user_name, "expires": str(entry.expires)})
            continue
        kept.append(entry)
    path = SLACK_SOURCE if file is None else f"{file.path} + {SLACK_SOURCE}" if kept else file.path
    listed = tuple(SlackAcceptLabel({"label": e.label(), "by": e.by, "expires": str(e.expires)}) for e in kept)
    return Merged(AcceptFile(path, (*file_entries, *kept)), len(kept), shadowed, listed=listed)


def annotate(diff: ContractDiff, merged: Merged) -> ContractDiff:
    """The steered diff with what Slack contributed (`acceptance.slack`) and a note per shadowed entry."""
    if not merged.from_slack and not merged.shadowed and not merged.unread:
        return diff
    slack: SlackAcceptance = {
        "entries": merged.from_slack,
        "from_slack": list(merged.listed),
        "shadowed": merged.shadowed,
    }
    if merged.unread:
        slack["unread"] = merged.unread
    acceptance: Acceptance = {**(diff.get("acceptance") or Acceptance()), "slack": slack}
    return {**diff, "acceptance": acceptance, "notes": [*(diff.get("notes") or []), *merged.notes()]}


def slack_accepts_with(loaded: LoadedConfig, server: str, file: AcceptFile | None) -> Merged:
    """The server's accept list for a run: its file's entries and those made in Slack (read from the state
    database; a check without one has no Slack entries, and one that cannot be read is a note, not an error)."""
    path = loaded.resolve(loaded.config.state)
    if not path.is_file():
        return merge(file, [])
    try:
        found = read_accepts(path, server)
    except (StateError, sqlite3.Error, OSError) as exc:
        reason = f"{path}: the state database cannot be read ({exc})"
        log.warning("Slack accepts for %s not used: %s", server, reason)
        return dataclasses.replace(merge(file, []), unread=reason)
    return merge(file, found)


def read_accepts(path: Path, server: str) -> list[SlackAccept]:
    """The server's Slack accepts, read without writing the state (no migration, no WAL switch); a state
    without the table has none (no service has migrated it yet, so no one can have accepted in Slack)."""
    return accepts_of(read_slack_accept_rows(path, server))
