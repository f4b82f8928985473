"""The server set on `/` and in `/api/status`: its latest changes (appeared, retired, redefined), the retired
servers (their runs kept, off the matrix), the repositories without a team file with the proposal made for
each, and the repositories no rule gives an owner."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from watcher.serverset.changes import recent_changes
from watcher.serverset.record import origin_name, retired_servers
from watcher.web.context import WebContext

if TYPE_CHECKING:  # repos.show is imported when a repository is configured (see _proposals)
    from watcher.repos.show import ProposalRow

CHANGES_SHOWN = 12


@dataclass(frozen=True)
class ChangeLine:
    kind: str
    """appeared, retired or redefined."""
    at: str
    server: str
    team: str
    text: str


@dataclass(frozen=True)
class RetiredServer:
    server: str
    team: str
    origin: str
    retired: str


@dataclass(frozen=True)
class UnownedRepo:
    """A repository no ownership rule maps to a team, and why (both outside text, cleaned for the page)."""

    repository: str
    why: str


@dataclass(frozen=True)
class ServerSetView:
    changes: list[ChangeLine] = field(default_factory=list)
    retired: list[RetiredServer] = field(default_factory=list)
    proposals: list[ProposalRow] = field(default_factory=list)
    """Repositories without a team file: what detection found and the file proposed (watcher.repos.proposal)."""
    unowned: list[UnownedRepo] = field(default_factory=list)
    """Repositories discovery found that no ownership rule maps to a team (watcher.repos.owners)."""


def collect_server_set(ctx: WebContext) -> ServerSetView:
    changes = [
        ChangeLine(str(c["kind"]), str(c["at"]), str(c["name"]), str(c["team"]), ctx.clean(c["line"]))
        for c in recent_changes(ctx.store, CHANGES_SHOWN)
    ]
    retired = [
        RetiredServer(e.name, e.team, ctx.clean(origin_name(e.origin)), e.retired) for e in retired_servers(ctx.store)
    ]
    return ServerSetView(changes, retired, _proposals(ctx), _unowned(ctx))


def _proposals(ctx: WebContext) -> list[ProposalRow]:
    config = ctx.loaded.config
    if not (config.repos or config.discover.github):
        return []
    from watcher.repos.show import proposals_json

    return proposals_json(config, ctx.store)


def _unowned(ctx: WebContext) -> list[UnownedRepo]:
    if not ctx.loaded.config.discover.github:
        return []
    from watcher.repos.discover import unowned

    return [UnownedRepo(ctx.clean(r.repository), ctx.clean(r.why)) for r in unowned(ctx.store)]
