"""A server's code from git: one shallow cache clone per repository, the exact commit exported per run.

The real `git` CLI does the work. The cache (`suites.git_cache_dir/<name>-<hash>.git`) is a bare
repository; each run fetches its ref there with `--depth 1` (only new objects travel), resolves the
commit, and exports that commit's tree with `git archive` into the run's own folder, so concurrent
runs never share a working tree. The tree is unpacked by `extract.extract_tree`, which checks every
member first (no absolute or escaping link, no device): a refusal is the run's error, naming the member's
path. A token reaches git only through `GIT_CONFIG_*` variables of that one fetch (an
`http.extraHeader`): never its argv, never a log line, never the server under test.

A fetch that fails is a result with git's reason; an older checkout is never used in its place.

Outside values never become options: every positional argument follows `--`, a URL or ref starting with
`-` is refused, and only the protocols in `suites.git_protocols` are used (checked here and enforced by
git itself through `GIT_ALLOW_PROTOCOL`). A fetch killed half-way leaves git's `*.lock` files behind: with
the cache's own lock held, a lock file no live process has open is removed before the next fetch; a cache
git reports as broken is deleted and fetched afresh once, not reported as an error forever.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import re
import shutil
import tarfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from watcher.boundary.launch import Host, HostReason
from watcher.boundary.process import CommandResult, run_command, scrubbed_env
from watcher.config import LoadedConfig
from watcher.core import vault
from watcher.core.secret_policy import mask
from watcher.suites.build.env import locked
from watcher.suites.settings import DEFAULT_GIT_PROTOCOLS, GitSource, Server, git_protocol_refusal
from watcher.suites.source.extract import UnsafeMember, extract_tree

_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")
logger = logging.getLogger(__name__)

WEDGED = re.compile(
    r"\.lock'?: File exists|unable to create .*\.lock|corrupt|bad object|not a git repository|"
    r"invalid object|loose object|unable to read|packed-refs|bad config|inflate:|shallow file has changed",
    re.IGNORECASE,
)
"""git's words for a cache that is broken (not for a remote that refused or a ref that does not exist)."""


class CheckoutError(Exception):
    """The watcher cannot fetch the source as configured (e.g. its token is not set)."""


@dataclass
class Checkout:
    ok: bool
    git: str
    """The repository, without any credentials in its URL."""
    ref: str
    subdir: str
    commit: str | None = None
    root: str = ""
    """The exported tree (the repository's root at `commit`)."""
    project: str = ""
    """The server's folder: root/subdir."""
    seconds: float = 0.0
    error: str | None = None
    evidence: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def display_url(url: str) -> str:
    """The URL with any user name or password removed (it goes to reports and Slack)."""
    parts = urlsplit(url)
    if parts.scheme and parts.netloc and "@" in parts.netloc:
        return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    return url


def fetch_url(loaded: LoadedConfig, source: GitSource) -> str:
    """What git is given: URLs as written; a local path resolved against the config's folder."""
    if "://" in source.git or _SCP_LIKE.match(source.git):
        return source.git
    return str(loaded.resolve(source.git))


def read_token(loaded: LoadedConfig, server: Server, environ: Mapping[str, str]) -> str | None:
    """The server's git token (token_env, then token_file), or None when none is configured."""
    path = loaded.resolve(server.token_file) if server.token_file else None
    try:
        value = vault.read_token(server.token_env, path, environ)
    except OSError as exc:
        raise CheckoutError(f"servers.{server.name}.token_file: cannot read {path}: {exc.strerror}") from exc
    if value is None and path is not None:
        raise CheckoutError(f"servers.{server.name}.token_file: {path} is empty")
    if value is None and server.token_env:
        raise CheckoutError(f"servers.{server.name}.token_env: {server.token_env} is not set")
    return value


def auth_env(token: str) -> dict[str, str]:
    """Git configuration, passed as environment, that sends the token as HTTP basic auth."""
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "http.extraHeader",
        "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
    }


def cache_dir(cache_root: Path, url: str) -> Path:
    name = re.sub(r"[^A-Za-z0-9._-]", "_", url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")) or "repo"
    return cache_root / f"{name}-{hashlib.sha256(url.encode()).hexdigest()[:12]}.git"


def checkout(
    url: str,
    source: GitSource,
    *,
    cache_root: Path,
    dest: Path,
    token: str | None,
    timeout: float,
    secret_names: set[str],
    cancel: threading.Event | None = None,
    protocols: Sequence[str] = DEFAULT_GIT_PROTOCOLS,
) -> Checkout:
    """Fetch `source.ref` of `url` into the cache and export that commit's tree to `dest`."""
    started = time.monotonic()
    result = Checkout(ok=False, git=display_url(source.git), ref=source.ref, subdir=source.subdir)
    refusal = _refusal(url, source, protocols)
    if refusal:
        result.error = refusal
        return _done(result, started)
    secrets = (token,) if token else ()
    base = scrubbed_env(secret_names=secret_names, installer=True).env
    base.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "",
            "GCM_INTERACTIVE": "never",
            # git's own allow-list, for every transport it might be led to (redirects, submodules, helpers).
            "GIT_ALLOW_PROTOCOL": ":".join(protocols),
            "GIT_PROTOCOL_FROM_USER": "0",
        }
    )
    cache = cache_dir(cache_root, url)
    log = dest.parent / "source.log"
    deadline = started + timeout

    def git(step: str, *args: str, env: dict[str, str] = base, stdout: Path | None = None) -> CommandResult | None:
        command = ["git", *args]
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"$ {' '.join(command)}\n")
        run = run_command(
            command,
            cwd=cache_root,
            env=env,
            timeout=max(1.0, deadline - time.monotonic()),
            log_path=log,
            cancel=cancel,
            stdout_path=stdout,
            launcher=Host(HostReason.GIT),  # outside values only after `--`, protocols allow-listed (above)
        )
        if run.ok:
            return run
        evidence = mask(run.tail, secrets)
        last = next((line for line in reversed(evidence.splitlines()) if line.strip()), "")
        result.error = f"{step} failed ({run.describe()})" + (f": {last.strip()}" if last else "")
        result.evidence = evidence
        return None

    cache_root.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    fetch_env = {**base, **auth_env(token)} if token else base

    def fetch() -> CommandResult | None:
        return git(
            f"git fetch of {result.git} {source.ref}",
            *("--git-dir", str(cache), "fetch", "--depth", "1", "--no-tags", "--quiet", "--", url, source.ref),
            env=fetch_env,
        )

    with locked(cache.with_name(cache.name + ".lock")):
        # Holding the cache's lock, no git of ours works in it: a lock file nobody has open is a dead fetch's.
        for stale in remove_stale_locks(cache):
            logger.warning("removed %s, left by a git process that no longer runs", stale)
        if not (cache / "HEAD").exists() and not _init(git, cache):
            return _done(result, started)
        fetched = fetch()
        if not fetched and WEDGED.search(result.evidence or result.error or ""):
            logger.warning("git cache %s is broken (%s); fetching it afresh", cache, result.error)
            shutil.rmtree(cache, ignore_errors=True)
            result.error, result.evidence = None, ""
            if not _init(git, cache):
                return _done(result, started)
            fetched = fetch()
        if not fetched:
            return _done(result, started)
        commit_file = dest.parent / "source.commit"
        if not git("git rev-parse", "--git-dir", str(cache), "rev-parse", "FETCH_HEAD^{commit}", stdout=commit_file):
            return _done(result, started)
        commit = commit_file.read_text(encoding="utf-8").strip()
        # A ref of our own keeps the commit's objects in the cache until the next fetch moves it.
        ref_name = "refs/mcp-watcher/" + hashlib.sha256(source.ref.encode()).hexdigest()[:16]
        if not git("git update-ref", "--git-dir", str(cache), "update-ref", ref_name, commit):
            return _done(result, started)
        archive = dest.parent / "source.tar"
        exported = git("git archive", "--git-dir", str(cache), "archive", "--format=tar", commit, stdout=archive)
    if not exported:
        return _done(result, started)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    try:
        extract_tree(archive, dest)
    except UnsafeMember as exc:
        shutil.rmtree(dest, ignore_errors=True)
        result.error = f"{result.git} at {commit[:12]}: the tree has a member the watcher does not write: {exc}"
        return _done(result, started)
    except (tarfile.TarError, OSError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        result.error = f"{result.git} at {commit[:12]}: the tree could not be unpacked: {exc}"
        return _done(result, started)
    finally:
        archive.unlink(missing_ok=True)
    result.commit = commit
    result.root = str(dest)
    project = dest / source.subdir if source.subdir else dest
    result.project = str(project)
    if not project.is_dir():
        result.error = f"{result.git} at {commit[:12]} has no folder {source.subdir!r}"
        return _done(result, started)
    result.ok = True
    return _done(result, started)


def _init(git: Callable[..., CommandResult | None], cache: Path) -> bool:
    shutil.rmtree(cache, ignore_errors=True)
    return git("git init", "init", "--bare", "--quiet", "--", str(cache)) is not None


def _refusal(url: str, source: GitSource, protocols: Sequence[str]) -> str | None:
    """Why this source may not be fetched (a value git would read as an option, a protocol not allowed)."""
    for key, value in (("source.git", source.git), ("source.git", url), ("source.ref", source.ref)):
        if value.startswith("-"):
            return f"{key} {value!r} starts with '-' (git would read it as an option); refused"
    problem = git_protocol_refusal(source.git, protocols)
    return f"source.git: {problem}" if problem else None


def remove_stale_locks(cache: Path) -> list[Path]:
    """Delete git's `*.lock` files in `cache` that no live process has open; returns those removed.

    Call with the cache's own lock held (so no git of this watcher is at work in it)."""
    if not cache.is_dir():
        return []
    locks = [p for p in cache.rglob("*.lock") if p.is_file()]
    if not locks:
        return []
    held = _open_files()
    removed = []
    for lock in locks:
        if str(lock.resolve()) in held:
            continue
        try:
            lock.unlink()
        except OSError:
            continue
        removed.append(lock)
    return removed


def _open_files() -> set[str]:
    """Every file some process this user can see has open (from /proc/<pid>/fd)."""
    found: set[str] = set()
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return found
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                found.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                continue
    return found


def _done(result: Checkout, started: float) -> Checkout:
    result.seconds = round(time.monotonic() - started, 2)
    return result


__all__ = ["Checkout", "CheckoutError", "checkout", "display_url", "fetch_url", "read_token"]
