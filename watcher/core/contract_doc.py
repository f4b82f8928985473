"""The contract diff document, typed: what `mcp-watcher diff --format json` prints, the accept lists steer and a
run report keeps as its `contract` part (watcher/contract/report.py writes it, watcher/contract/accept.py and
watcher/decisions/accepts.py steer it; the suites, the notices, the run page and the clusters read it). And the
contract snapshot's summary a run report keeps as its `snapshot` part (watcher/contract/snapshot/take.py).

The document's structure is typed here; what the server itself said stays JSON (`McpJson`): a change's `before`
and `after` (a tool's inputSchema, an entry's field) and the protocol version a server answered. Every part keeps
fields written by another version (`extra="allow"`), so a stored document is never cut down when it is read.
"""

from __future__ import annotations

import pydantic
from typing_extensions import TypedDict

from watcher.core.checked import checked

McpJson = pydantic.JsonValue
"""A value as the MCP server gave it (any JSON): the honest edge of the document."""

_KEEP_UNKNOWN = pydantic.with_config(pydantic.ConfigDict(extra="allow"))


@_KEEP_UNKNOWN
class AcceptedWhy(TypedDict, total=False):
    """Why an accepted change no longer fails a run: the accept entry's reason, expiry (ISO date) and author."""

    reason: str
    expires: str
    by: str | None


@_KEEP_UNKNOWN
class ContractChange(TypedDict, total=False):
    """One change between the baseline and the candidate (`contract/report.change_json`), as steered: re-graded
    by a level (`originalGrade`) or accepted (`accepted`). `hint`, `era` and `profile` only when set."""

    list: str
    name: str
    path: str | None
    kind: str
    before: McpJson
    after: McpJson
    breaksClients: bool
    affectsModels: bool
    rule: str
    grade: str
    hint: str
    era: str
    profile: str
    originalGrade: str
    accepted: AcceptedWhy


@_KEEP_UNKNOWN
class ContractSummary(TypedDict, total=False):
    """The document's counts: of `changes` (total, breaking, affecting models, dangerous), lints and accepted."""

    total: int
    breaksClients: int
    affectsModels: int
    dangerous: int
    lints: int
    accepted: int


@_KEEP_UNKNOWN
class AcceptEntryRecord(TypedDict, total=False):
    """An accept entry as the document names it (`AcceptEntry.model_dump(by_alias=True)`): stale, expired or the
    file's own entries."""

    rule: str
    list: str
    name: str
    path: str | None
    reason: str
    expires: str
    by: str | None


@_KEEP_UNKNOWN
class SlackAcceptLabel(TypedDict):
    """A Slack accept entry named in the document: its label, who made it and its expiry."""

    label: str
    by: str | None
    expires: str


@_KEEP_UNKNOWN
class SlackAcceptance(TypedDict, total=False):
    """What the accepts made in Slack did (`decisions/accepts.annotate`)."""

    entries: int
    from_slack: list[SlackAcceptLabel]
    shadowed: list[SlackAcceptLabel]
    unread: str
    applied_by: str


@_KEEP_UNKNOWN
class Acceptance(TypedDict, total=False):
    """What the accept list did not do: its file, entries that matched nothing (stale) or expired, the file's own
    entries (so a later pass knows them), and Slack's part."""

    file: str
    stale: list[AcceptEntryRecord]
    expired: list[AcceptEntryRecord]
    file_entries: list[AcceptEntryRecord]
    slack: SlackAcceptance


@_KEEP_UNKNOWN
class ContractDiff(TypedDict, total=False):
    """The contract diff document (see the module's doc), or only `error` when no diff could be made."""

    error: str
    baseline: str
    candidate: str
    changes: list[ContractChange]
    lints: list[ContractChange]
    summary: ContractSummary
    eras: list[str]
    notes: list[str]
    accepted: list[ContractChange]
    ignored: list[ContractChange]
    acceptance: Acceptance
    baseline_snapshot: str


@_KEEP_UNKNOWN
class EraRecord(TypedDict, total=False):
    """One era of a snapshot: its status ("ok", "error: …"), its lists' sizes and the protocol version the server
    answered (as it answered it)."""

    status: str
    counts: dict[str, int]
    protocolVersion: McpJson


@_KEEP_UNKNOWN
class SnapshotSummary(TypedDict, total=False):
    """The contract snapshot's summary (`contract/snapshot/take.take_snapshot`): where it was written, its
    layout, the first client profile's eras and every profile's."""

    outDir: str
    layout: str
    eras: dict[str, EraRecord]
    profiles: dict[str, dict[str, EraRecord]]


class ContractDocError(ValueError):
    """A contract diff document (a report file handed to `mcp-watcher accept`) that does not fit its types."""


_DIFF_READER: pydantic.TypeAdapter[ContractDiff] = pydantic.TypeAdapter(ContractDiff)


def load_contract_diff(data: object, where: str) -> ContractDiff:
    """A decoded contract diff document, checked against its types and handed back as it is (nothing added or
    dropped); one that does not fit is a ContractDocError naming `where` and the field."""
    return checked(_DIFF_READER, data, where, ContractDocError, whole="the document")
