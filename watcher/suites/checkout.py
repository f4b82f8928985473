"""A server's code from git: one shallow cache clone per repository, the exact commit exported per run.

The real `git` CLI does the work. The cache (`suites.git_cache_dir/<name>-<hash>.git`) is a bare
repository; each run fetches its ref there with `--depth 1` (only new objects travel), resolves the
commit, and exports that commit's tree with `git archive` into the run's own folder, so concurrent
runs never share a working tree. A token reaches git only through `GIT_CONFIG_*` variables of that
one fetch (an `http.extraHeader`): never its argv, never a log line, never the server under test.

A fetch that fails is a result with git's reason; an older checkout is never used in its place.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import tarfile
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from watcher.config import GitSource, LoadedConfig, Server
from watcher.logs import redact
from watcher.suites.env import locked
from watcher.suites.process import CommandResult, run_command, scrubbed_env

_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")


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
    if server.token_env:
        value = environ.get(server.token_env, "").strip()
        if value:
            return value
        if not server.token_file:
            raise CheckoutError(f"servers.{server.name}.token_env: {server.token_env} is not set")
    if server.token_file:
        path = loaded.resolve(server.token_file)
        try:
            value = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise CheckoutError(f"servers.{server.name}.token_file: cannot read {path}: {exc.strerror}") from exc
        if not value:
            raise CheckoutError(f"servers.{server.name}.token_file: {path} is empty")
        return value
    return None


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
) -> Checkout:
    """Fetch `source.ref` of `url` into the cache and export that commit's tree to `dest`."""
    started = time.monotonic()
    result = Checkout(ok=False, git=display_url(source.git), ref=source.ref, subdir=source.subdir)
    secrets = (token,) if token else ()
    base = scrubbed_env(secret_names=secret_names, installer=True).env
    base.update({"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "GCM_INTERACTIVE": "never"})
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
        )
        if run.ok:
            return run
        evidence = redact(run.tail, secrets)
        last = next((line for line in reversed(evidence.splitlines()) if line.strip()), "")
        result.error = f"{step} failed ({run.describe()})" + (f": {last.strip()}" if last else "")
        result.evidence = evidence
        return None

    cache_root.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    with locked(cache.with_name(cache.name + ".lock")):
        if not (cache / "HEAD").exists():
            shutil.rmtree(cache, ignore_errors=True)
            if not git("git init", "init", "--bare", "--quiet", str(cache)):
                return _done(result, started)
        fetch_env = {**base, **auth_env(token)} if token else base
        fetched = git(
            f"git fetch of {result.git} {source.ref}",
            *("--git-dir", str(cache), "fetch", "--depth", "1", "--no-tags", "--quiet", url, source.ref),
            env=fetch_env,
        )
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
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    archive.unlink()
    result.commit = commit
    result.root = str(dest)
    project = dest / source.subdir if source.subdir else dest
    result.project = str(project)
    if not project.is_dir():
        result.error = f"{result.git} at {commit[:12]} has no folder {source.subdir!r}"
        return _done(result, started)
    result.ok = True
    return _done(result, started)


def _done(result: Checkout, started: float) -> Checkout:
    result.seconds = round(time.monotonic() - started, 2)
    return result


__all__ = ["Checkout", "CheckoutError", "checkout", "display_url", "fetch_url", "read_token"]
