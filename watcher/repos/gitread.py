"""Reading one commit of a team's repository without a work tree: fetch the ref into the shared bare cache
(the same one a run's checkout uses), then read files and the file list of that exact commit with git."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from watcher.boundary.launch import HostReason, ToolRun, ToolTimeout, run_tool
from watcher.boundary.process import scrubbed_env
from watcher.core import untrusted
from watcher.core.errors import UntrustedInputError
from watcher.core.secret_policy import mask
from watcher.suites.build.env import locked
from watcher.suites.settings import DEFAULT_GIT_PROTOCOLS, git_protocol_refusal
from watcher.suites.source.checkout import auth_env, cache_dir, display_url

_LINK_MODE = "120000"


class GitReadError(Exception):
    """git could not fetch or read the repository; the message is git's reason (no credentials in it)."""


@dataclass(frozen=True)
class Commit:
    url: str
    """What git was given (may be a local path)."""
    cache: Path
    commit: str

    def read(self, path: str, *, limit: int = untrusted.MANIFEST.max_bytes) -> str | None:
        """The file's text at this commit, or None when the commit has no such file. A link, a submodule or
        a folder in its place, more than `limit` bytes, or text that is not UTF-8 is an UntrustedInputError
        naming the file (its bytes are never read past the size git lists)."""
        shown = f"{display_url(self.url)}@{self.commit[:12]}:{path}"
        listed = _git(self.cache, "--literal-pathspecs", "ls-tree", "-l", "-z", self.commit, "--", path).stdout
        entry = next((e for e in listed.split("\0") if e.partition("\t")[2] == path), None)
        if entry is None:
            return None
        mode, kind, obj, size = entry.partition("\t")[0].split()
        if mode == _LINK_MODE:
            raise UntrustedInputError(f"{shown}: is a symbolic link; a file the watcher reads is never a link")
        if kind != "blob":
            raise UntrustedInputError(f"{shown}: is a {'folder' if kind == 'tree' else kind}, not a file")
        if int(size) > limit:
            raise UntrustedInputError(f"{shown}: is {int(size):,} bytes, over the limit of {limit:,}; not read")
        data = _git_bytes(self.cache, "cat-file", "blob", obj)
        return untrusted.text_of(data[: limit + 1], shown)

    def files(self) -> list[str]:
        """Every file path in the commit's tree."""
        out = _git(self.cache, "ls-tree", "-r", "--name-only", "-z", self.commit).stdout
        return [name for name in out.split("\0") if name]


def fetch(
    url: str,
    ref: str,
    *,
    cache_root: Path,
    token: str | None,
    secret_names: set[str],
    timeout: float,
    protocols: Sequence[str] = DEFAULT_GIT_PROTOCOLS,
) -> Commit:
    """Fetch `ref` of `url` (depth 1) into the cache and name the commit it points at."""
    for what, value in (("git", url), ("ref", ref)):
        if value.startswith("-"):
            raise GitReadError(f"{what} {value!r} starts with '-' (git would read it as an option); refused")
    problem = git_protocol_refusal(url, protocols)
    if problem:
        raise GitReadError(problem)
    cache = cache_dir(cache_root, url)
    cache_root.mkdir(parents=True, exist_ok=True)
    env = scrubbed_env(secret_names=secret_names, installer=True).env
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "GIT_ALLOW_PROTOCOL": ":".join(protocols)})
    with locked(cache.with_name(cache.name + ".lock")):
        if not (cache / "HEAD").exists():
            _git(cache, "init", "--bare", "--quiet", "--", str(cache), env=env, git_dir=False)
        fetch_env = {**env, **auth_env(token)} if token else env
        done = _git(
            cache,
            "fetch",
            "--depth",
            "1",
            "--no-tags",
            "--quiet",
            "--",
            url,
            ref,
            env=fetch_env,
            check=False,
            timeout=timeout,
        )
        if done.returncode != 0:
            last = next((line for line in reversed(done.stderr.splitlines()) if line.strip()), "")
            if token:
                last = mask(last, (token,))
            raise GitReadError(f"git fetch of {display_url(url)} {ref} failed: {last.strip() or done.returncode}")
        commit = _git(cache, "rev-parse", "FETCH_HEAD^{commit}", env=env).stdout.strip()
    return Commit(url=url, cache=cache, commit=commit)


def _git_bytes(cache: Path, *args: str, timeout: float = 60) -> bytes:
    """git's stdout as bytes (a file's content: its decoding is the loader's)."""
    return _git(cache, *args, timeout=timeout).stdout_bytes


def _git(
    cache: Path,
    *args: str,
    env: dict[str, str] | None = None,
    check: bool = True,
    timeout: float = 60,
    git_dir: bool = True,
) -> ToolRun:
    command = ["git", *(["--git-dir", str(cache)] if git_dir else []), *args]
    # git on the host: outside values only after `--`, protocols allow-listed by fetch() above.
    child = env if env is not None else scrubbed_env(installer=True).env
    try:
        done = run_tool(command, why=HostReason.GIT, env=child, timeout=timeout)
    except ToolTimeout as exc:
        raise GitReadError(f"git {args[0]} took longer than {timeout:.0f} s") from exc
    except OSError as exc:
        raise GitReadError(f"git {args[0]} could not start: {exc}") from exc
    if check and done.returncode != 0:
        raise GitReadError(f"git {args[0]} failed: {done.stderr.strip()[-300:]}")
    return done
