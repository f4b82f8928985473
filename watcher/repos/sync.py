"""Read every team repository's `.mcp-watcher.yaml` and merge its servers into the running config.

Per repository the store keeps (key-value `repo:<git>`) the last good commit with its servers and
detections, and the current error. A broken file or a failed fetch is that repository's error: one notice
to its team's channel per distinct error (through the outbox), shown by `status` and the page, while the
repository keeps its last good servers and every other repository is read as usual. A server name another
repository owns by record (`watcher.serverset.record`) is refused for that one server: its team is told,
naming both repositories, and the file's other servers are used. A removed file removes that repository's
servers. The merged configuration is valid by construction: a server that does not fit the central file
(any more) is left out, and said so, never a configuration the service cannot start with.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NotRequired

import pydantic
from pydantic import ValidationError
from typing_extensions import TypedDict

from watcher.config import LoadedConfig, WatcherConfig, secret_env_names
from watcher.core import untrusted, vault
from watcher.core.errors import ConfigError, StateError
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.core.timefmt import iso, utcnow
from watcher.notify import keys
from watcher.notify.blocks import Mrkdwn, escape, section
from watcher.repos.detect import DetectionEntry
from watcher.repos.gitread import GitReadError, fetch
from watcher.repos.proposal import Proposal, propose, queue_proposals
from watcher.repos.settings import TeamRepo
from watcher.repos.teamfile import FILE_NAME, parse_team_file
from watcher.serverset.changes import Placed
from watcher.serverset.record import CENTRAL, ServerRecord, claim_refusal
from watcher.suites.settings import GitSource, Server
from watcher.suites.source.checkout import display_url, fetch_url

log = logging.getLogger(__name__)
_KV = "repo:"


@pydantic.with_config(pydantic.ConfigDict(extra="allow"))
class StoredServer(TypedDict):
    """A team file's server as the repository state keeps it: its settings' JSON dump (`Server.model_dump`). The
    messages, `status` and the pass read these fields; the others are kept as they are (`server_models`)."""

    name: str
    language: str
    sdk: str
    sdk_package: NotRequired[str | None]
    baseline_sdk_version: str
    requirements: list[str]


_SERVER: pydantic.TypeAdapter[StoredServer] = pydantic.TypeAdapter(StoredServer)


def stored_server(server: Server) -> StoredServer:
    """A server's JSON dump as the repository state keeps it."""
    return _SERVER.validate_python(server.model_dump(mode="json"))


@dataclass
class RepoState:
    """What the store remembers of one repository."""

    git: str
    team: str
    ref: str = "HEAD"
    commit: str | None = None
    """The commit the servers in use were read from (the last good one)."""
    servers: list[StoredServer] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)
    detections: dict[str, DetectionEntry | None] = field(default_factory=dict)
    overridden: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None
    error_commit: str | None = None
    proposal: Proposal | None = None
    """Without a team file: the file proposed from what detection found (watcher.repos.proposal)."""
    refused: dict[str, str] = field(default_factory=dict)
    """Server name → why this repository may not use it (a name another one owns); the other servers are used."""
    checked: str | None = None
    has_file: bool = False
    seen: bool = False
    """Good servers were read from it once (the next such pass is not its first)."""
    onboarded: bool = False
    """The team got its onboarding message (or one is queued for its first runs' verdicts)."""
    onboarding_runs: list[str] = field(default_factory=list)
    """server@version runs whose verdicts the onboarding message waits for."""

    @classmethod
    def load(cls, store: Store, repo: TeamRepo) -> RepoState:
        """The stored state, checked against its fields' types (a field of another type is a StateError naming
        it); a key this version does not know is left out, a field not stored takes its default."""
        key = _KV + repo.git
        stored = store.get_kv(key) or {}
        if not isinstance(stored, dict):
            raise StateError(f"state {key}: a repository's state is a JSON object, not {type(stored).__name__}")
        try:
            return _STATE.validate_python({**stored, "git": repo.git, "team": repo.team, "ref": repo.ref})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise StateError(f"state {key}: {where}: {first['msg']}") from None

    @classmethod
    def load_or_unreadable(cls, store: Store, repo: TeamRepo) -> tuple[RepoState, bool]:
        """The stored state, or, when it cannot be read (`load`'s StateError), a state of defaults that carries
        that error, and True: the repository is left out and reported until it is fixed, one unreadable state
        never stops the pass or a page, and what is stored stays as it is (it is not saved over)."""
        try:
            return cls.load(store, repo), False
        except StateError as exc:
            log.error("team repository %s: its stored state cannot be read: %s", display_url(repo.git), exc)
            fresh = cls(git=repo.git, team=repo.team, ref=repo.ref)
            fresh.error = f"the watcher's stored state of this repository cannot be read ({exc}); left out until fixed"
            return fresh, True

    def save(self, store: Store) -> None:
        proposal = asdict(self.proposal) if self.proposal else None
        store.set_kv(_KV + self.git, {**self.__dict__, "proposal": proposal})

    def server_models(self) -> list[Server]:
        return [Server.model_validate(s) for s in self.servers]

    def team_file(self, commit: str | None = None) -> str:
        return f"{display_url(self.git)}@{(commit or self.commit or '?')[:12]}:{FILE_NAME}"


_STATE: pydantic.TypeAdapter[RepoState] = pydantic.TypeAdapter(RepoState)


@dataclass
class SyncResult:
    config: WatcherConfig
    repos: list[RepoState]
    new: list[RepoState]
    """Repositories seen with a good team file for the first time in this pass."""


def all_repos(config: WatcherConfig, store: Store) -> list[TeamRepo]:
    """The configured repositories, then the discovered ones not configured by hand."""
    from watcher.repos.discover import discovered

    listed = {repo.git for repo in config.repos}
    found = discovered(store) if config.discover.github else []
    return [*config.repos, *(repo for repo in found if repo.git not in listed)]


def repo_states(config: WatcherConfig, store: Store) -> list[RepoState]:
    return [RepoState.load_or_unreadable(store, repo)[0] for repo in all_repos(config, store)]


def merged(loaded: LoadedConfig, states: list[RepoState]) -> LoadedConfig:
    """The central config with every repository's servers in use added. Valid by construction: a server whose
    name is taken already (the central file's first, then in repository order) or that does not fit the central
    file (an SDK or team removed from it since) is left out and logged; merging twice adds nothing."""
    config = loaded.config
    names = {server.name for server in config.servers}
    extra: list[Server] = []
    for state in states:
        for server in state.server_models():
            if server.name not in names:
                names.add(server.name)
                extra.append(server)
    if not extra:
        return loaded
    values: dict[str, object] = {name: getattr(config, name) for name in type(config).model_fields}
    try:
        whole = WatcherConfig.model_validate({**values, "servers": [*config.servers, *extra]})
    except ValidationError:
        whole = _one_by_one(config, values, extra)
    return LoadedConfig(config=whole, path=loaded.path, base_dir=loaded.base_dir)


def _one_by_one(config: WatcherConfig, values: dict[str, object], extra: list[Server]) -> WatcherConfig:
    """The servers that fit, added one at a time (only when the whole set does not validate)."""
    servers = list(config.servers)
    whole = config
    for server in extra:
        try:
            whole = WatcherConfig.model_validate({**values, "servers": [*servers, server]})
        except ValidationError as exc:
            reason = exc.errors()[0].get("msg", str(exc)) if exc.errors() else str(exc)
            log.error("team server %s left out: it does not fit the central config: %s", server.name, reason)
            continue
        servers.append(server)
    return whole


def placed_servers(loaded: LoadedConfig, states: list[RepoState]) -> list[Placed]:
    """Every server of a merged config with where it comes from (the central file or a repository)."""
    from_repo = {
        server["name"]: (state.git, f"{state.team_file()} line {state.lines.get(server['name'], 1)}")
        for state in states
        for server in state.servers
    }
    central_path = loaded.path
    placed = []
    for i, server in enumerate(loaded.config.servers):
        origin, where = from_repo.get(server.name, (CENTRAL, f"{central_path}: servers[{i}]"))
        if origin != CENTRAL and (server.source is None or server.source.git != origin):
            origin, where = CENTRAL, f"{central_path}: servers[{i}]"  # a central server of the same name won
        placed.append(Placed(server, origin, where))
    return placed


def in_force(central: LoadedConfig, store: Store) -> LoadedConfig:
    """The central file plus the servers the team repositories declare, as the last good sync recorded them:
    what a command that names a server or reads the server set works with (the running service's own)."""
    if not (central.config.repos or central.config.discover.github):
        return central
    return effective_config(central, store)


def effective_config(loaded: LoadedConfig, store: Store) -> LoadedConfig:
    """What the service runs with now: the central config plus each repository's last good servers."""
    return merged(loaded, repo_states(loaded.config, store))


def sync_repos(loaded: LoadedConfig, store: Store, environ: Mapping[str, str] | None = None) -> SyncResult:
    """Read each repository's team file at its ref's current commit; returns the merged config."""
    env = vault.environ() if environ is None else environ
    config = loaded.config
    cache_root = loaded.resolve(config.suites.git_cache_dir)
    secrets = secret_env_names(config)
    states: list[RepoState] = []
    new: list[RepoState] = []
    record = ServerRecord.load(store)
    claimed: dict[str, tuple[str, str]] = {
        s.name: (CENTRAL, f"{loaded.path}: servers[{i}]") for i, s in enumerate(config.servers)
    }
    if config.discover.github:
        from watcher.repos.discover import queue_unowned_notices, refresh_discovery

        refresh_discovery(config.discover.github, config.http_client, store, env)
        queue_unowned_notices(config, store)
    for repo in all_repos(config, store):
        state, unreadable = RepoState.load_or_unreadable(store, repo)
        if unreadable:
            states.append(state)
            continue
        try:
            _read_one(
                loaded,
                store,
                repo,
                state,
                cache_root,
                secrets,
                env,
                functools.partial(claim_refusal, record, claimed, repo.git),
                {*claimed, *record.entries},
            )
        except Exception as exc:  # one team's file, whatever it does, is that team's error, never the pass's
            log.exception("team repository %s could not be read", display_url(repo.git))
            detail = str(exc)[:300]
            what = f"{FILE_NAME} could not be read: {type(exc).__name__}" + (f": {detail}" if detail else "")
            _fail(state, what, None)
        for server in state.servers:
            claimed.setdefault(
                server["name"], (repo.git, f"{state.team_file()} line {state.lines.get(server['name'], 1)}")
            )
        state.checked = iso(utcnow())
        if state.servers and not state.seen:
            state.seen = True
            new.append(state)
        state.save(store)
        states.append(state)
    queue_error_notices(loaded, store, states)
    queue_proposals(config, store, states)
    return SyncResult(merged(loaded, states).config, states, new)


def _read_one(
    loaded: LoadedConfig,
    store: Store,
    repo: TeamRepo,
    state: RepoState,
    cache_root: Path,
    secrets: set[str],
    env: Mapping[str, str],
    refusal: Callable[[str, str], str | None],
    taken: set[str],
) -> None:
    config = loaded.config
    token = env.get(repo.token_env, "").strip() or None if repo.token_env else None
    url = fetch_url(loaded, GitSource(git=repo.git, ref=repo.ref))
    try:
        commit = fetch(
            url,
            repo.ref,
            cache_root=cache_root,
            token=token,
            secret_names=secrets,
            timeout=120,
            protocols=config.suites.git_protocols,
        )
    except GitReadError as exc:
        _fail(state, str(exc), None)
        return
    try:
        text = commit.read(FILE_NAME, limit=untrusted.TEAM_FILE.max_bytes)
    except (ConfigError, GitReadError) as exc:  # a link, a folder, too large, not UTF-8
        _fail(state, str(exc), commit.commit)
        return
    if text is None:
        state.has_file, state.commit, state.servers, state.error = False, commit.commit, [], None
        state.lines, state.detections, state.overridden, state.refused = {}, {}, {}, {}
        try:
            state.proposal = propose(repo.git, commit.files(), commit.read, taken)
        except GitReadError as exc:  # the tree could not be listed: no proposal, said in the log
            log.warning("team repository %s: no team file, and no proposal: %s", display_url(repo.git), exc)
            state.proposal = None
        return
    filename = state.team_file(commit.commit)
    try:
        files = commit.files()
        parsed = parse_team_file(
            text,
            filename=filename,
            git=repo.git,
            commit=commit.commit,
            team=repo.team,
            token_env=repo.token_env,
            config=config,
            files=files,
            read=commit.read,
            known=lambda sdk: [v["version"] for v in store.versions_of(sdk) if not v["yanked"]],
        )
    except (ConfigError, GitReadError) as exc:
        _fail(state, str(exc), commit.commit)
        return
    refused = {s.name: refusal(s.name, f"{filename}:{parsed.lines.get(s.name, 1)}") for s in parsed.servers}
    known = set(state.refused.values())
    state.refused = {name: why for name, why in refused.items() if why}
    for why in state.refused.values():
        if why not in known:  # said once, not at every pass
            log.warning("team repository %s: %s", display_url(state.git), why)
    state.has_file, state.commit, state.error, state.error_commit = True, commit.commit, None, None
    state.proposal = None
    state.servers = [stored_server(s) for s in parsed.servers if s.name not in state.refused]
    state.lines = parsed.lines
    detections: dict[str, DetectionEntry | None] = {
        k: {**d.as_dict(), "resolved": parsed.resolved.get(k)} if d else None for k, d in parsed.detections.items()
    }
    state.detections = detections
    state.overridden = parsed.overridden


def _fail(state: RepoState, message: str, commit: str | None) -> None:
    """Record the error and tell the team once per distinct error; the last good servers stay."""
    state.error, state.error_commit = message, commit
    log.warning("team repository %s: %s", display_url(state.git), message)


def queue_error_notices(loaded: LoadedConfig, store: Store, states: list[RepoState]) -> list[str]:
    """One notice per distinct error of each repository to its team's channel, and one per refused server name
    (naming both repositories); returns the keys queued."""
    queued = []
    for state in states:
        team = loaded.config.team(state.team)
        problems: list[tuple[str, str | None, str]] = []
        if state.error:
            kept = (
                f"The servers from {state.commit[:12]} stay in use until it is fixed."
                if state.commit
                else "No server of this repository is watched until it is fixed."
            )
            problems.append((state.error, state.error_commit, kept))
        for name, why in sorted(state.refused.items()):
            problems.append((why, state.commit, f"The file's other servers are used; {name} is not, until renamed."))
        for error, commit, kept in problems:
            key = keys.repo_config_error(state.git, error, team.name)
            where = state.team_file(commit)
            text = Mrkdwn("mcp-watcher cannot use {}:\n{}\n{}").format(where, error, kept)
            blocks = [
                section(Mrkdwn("*mcp-watcher cannot use* `{}`").format(where)),
                section(Mrkdwn("```{}```").format(error)),
                section(escape(kept)),
            ]
            if store.enqueue(Notice(key, team.name, team.slack_channel, "repo-config-error", text, blocks)):
                queued.append(key)
    return queued
