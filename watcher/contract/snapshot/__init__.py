"""Take a contract snapshot of a running MCP server with the `mcp` client (stdio or streamable HTTP).

One era per connection: `legacy` does the initialize handshake, `modern` calls server/discover
and speaks 2026-07-28 per request (so the modern sessions of several client profiles share one). A
server that refuses an era gets a recorded "unsupported: <reason>" for it; a server that cannot be
reached or hangs gets "error: <reason>". Neither raises. Lists are fetched raw (the client's
x-mcp-header filter must not hide a tool from the snapshot), every page, and re-fetched from the
start when they change mid-way.

- `take`: `take_snapshot` / `take_snapshot_sync`, the manifest, the profiles' shared version probes
- `schedule`: which session runs on which server process
- `session`: one era under one profile (handshake or discover, server record, capabilities, versions)
- `connection`: one stdio process serving several sessions in turn
- `lists`, `probes`: paging through the lists; the error probes
- `outcome`: a session's result or recorded status
- `target`, `writing`: where to connect; the files written, secrets masked
"""

from __future__ import annotations

from watcher.contract.snapshot.lists import MAX_PAGES, MAX_WALKS
from watcher.contract.snapshot.probes import PROBE_PROTOCOL_VERSION, PROBE_RESOURCE, PROBE_TOOL
from watcher.contract.snapshot.take import FORMAT_VERSION, distinct_profiles, take_snapshot, take_snapshot_sync
from watcher.contract.snapshot.target import MIN_MASKED_LENGTH, SnapshotTarget
from watcher.core.secret_policy import MASK

__all__ = [
    "FORMAT_VERSION",
    "MASK",
    "MAX_PAGES",
    "MAX_WALKS",
    "MIN_MASKED_LENGTH",
    "PROBE_PROTOCOL_VERSION",
    "PROBE_RESOURCE",
    "PROBE_TOOL",
    "SnapshotTarget",
    "distinct_profiles",
    "take_snapshot",
    "take_snapshot_sync",
]
