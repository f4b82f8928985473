"""Unpacking a team's tree (the tar `git archive` writes) into a run's folder: every member checked by the
rules below before anything is written, then written member by member with no link followed on the way.

Standard library only, and no `tarfile` extraction filter (`filter=` is missing from Python 3.11.2, the
oldest Python the package claims): this module and `watcher.core.safe_files` are all it needs, so it runs
under any such Python, also without the watcher's dependencies. A refusal is an `UnsafeMember` naming the
member's path and the rule; nothing of the tree is written then.
"""

from __future__ import annotations

import os
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from watcher.core.safe_files import open_dir_inside

LINK_HOPS = 40
"""Links followed while resolving one link's target (the kernel's own limit), past that: a loop."""
_CHUNK = 1 << 20


class UnsafeMember(Exception):
    """A member of the tree that is not written: its path and the rule that refused it."""

    def __init__(self, path: str, rule: str, problem: str) -> None:
        super().__init__(f"{path!r}: {problem} [{rule}]")
        self.path = path
        self.rule = rule
        self.problem = problem


@dataclass(frozen=True)
class Rule:
    name: str
    doc: str


RULES = {
    rule.name: rule
    for rule in (
        Rule("absolute-path", "a member's path starts with '/': it would be written outside the tree"),
        Rule("parent-path", "a member's path has a '..' component: it would be written outside the tree"),
        Rule("special-file", "a device, a FIFO or another kind that is not a file, folder or link"),
        Rule("absolute-link", "a symbolic link to an absolute path: it points out of the tree"),
        Rule("escaping-link", "a symbolic link whose target, other links followed, leaves the tree"),
        Rule("link-loop", f"a symbolic link whose target does not resolve within {LINK_HOPS} links"),
        Rule("hard-link", "a hard link to anything but a regular file given earlier in the tree"),
        Rule("through-link", "a member below a symbolic link of the tree: writing it would follow the link"),
        Rule("repeated-path", "a path given twice: the second would replace what the first wrote"),
    )
}


def _refuse(path: str, rule: str, problem: str | None = None) -> UnsafeMember:
    return UnsafeMember(path, rule, problem or RULES[rule].doc)


def member_path(member: tarfile.TarInfo) -> str:
    """The member's path without empty or '.' components (an absolute path is kept whole, to be refused)."""
    return _clean(member.name)


def _clean(name: str) -> str:
    if name.startswith("/"):
        return name
    return "/".join(part for part in name.split("/") if part not in ("", "."))


def check_members(members: list[tarfile.TarInfo]) -> None:
    """Refuse the whole tree on the first member any rule refuses (raises UnsafeMember)."""
    links = {member_path(m): m.linkname for m in members if m.issym()}
    files: set[str] = set()
    seen: set[str] = set()
    for member in members:
        path = member_path(member)
        if not path:
            continue
        _check_path(path)
        if path in seen:
            raise _refuse(path, "repeated-path")
        seen.add(path)
        parts = path.split("/")
        for depth in range(1, len(parts)):
            if "/".join(parts[:depth]) in links:
                raise _refuse(path, "through-link", f"is below the link {'/'.join(parts[:depth])!r} of the tree")
        if member.issym():
            _check_link(path, links)
        elif member.islnk():
            target = _clean(member.linkname)
            if target not in files:
                raise _refuse(path, "hard-link", f"is a hard link to {target!r}, not a file given earlier in the tree")
        elif member.isreg():
            files.add(path)
        elif not member.isdir():
            raise _refuse(path, "special-file")


def _check_path(path: str) -> None:
    if path.startswith("/"):
        raise _refuse(path, "absolute-path")
    if ".." in path.split("/"):
        raise _refuse(path, "parent-path")


def _check_link(path: str, links: dict[str, str]) -> None:
    target = links[path]
    if target.startswith("/"):
        raise _refuse(path, "absolute-link", f"is a link to the absolute path {target!r}")
    hops = [LINK_HOPS]
    if _resolve(links, path.split("/")[:-1], target, hops) is None:
        if hops[0] < 0:
            raise _refuse(path, "link-loop")
        raise _refuse(path, "escaping-link", f"is a link to {target!r}, which leads out of the tree")


def _resolve(links: dict[str, str], here: list[str], target: str, hops: list[int]) -> list[str] | None:
    """The tree path `target` leads to from the folder `here` (links of the tree followed, '..' taken after
    them, as the kernel does); None when it leaves the tree or takes more than the hops left."""
    where = list(here)
    for step in target.split("/"):
        if step in ("", "."):
            continue
        if step == "..":
            if not where:
                return None
            where.pop()
            continue
        where.append(step)
        inner = links.get("/".join(where))
        if inner is None:
            continue
        hops[0] -= 1
        if hops[0] < 0 or inner.startswith("/"):
            return None
        resolved = _resolve(links, where[:-1], inner, hops)
        if resolved is None:
            return None
        where = resolved
    return where


def extract_tree(archive: Path, dest: Path) -> int:
    """Check every member of the tar `archive`, then write them into the empty folder `dest`; returns how
    many were written. Raises UnsafeMember (nothing written) or tarfile.TarError / OSError."""
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        check_members(members)
        written = 0
        for member in members:
            path = member_path(member)
            if not path:
                continue
            _write(tar, member, dest, path.split("/"))
            written += 1
    return written


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, parts: list[str]) -> None:
    if member.isdir():
        with open_dir_inside(dest, tuple(parts), create=True):
            return
    with open_dir_inside(dest, tuple(parts[:-1]), create=True) as folder:
        name = parts[-1]
        if member.issym():
            os.symlink(member.linkname, name, dir_fd=folder)
            return
        mode = 0o755 if member.mode & 0o111 else 0o644  # no set-id bits, no group or world write
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=folder)
        with os.fdopen(fd, "wb") as out:
            source = tar.extractfile(member)  # a hard link's data is its target's
            if source is not None:
                _copy(source.read, out.write)
            out.flush()
            os.utime(out.fileno(), (member.mtime, member.mtime))


def _copy(read: Callable[[int], bytes], write: Callable[[bytes], object]) -> None:
    while chunk := read(_CHUNK):
        write(chunk)


__all__ = ["RULES", "UnsafeMember", "check_members", "extract_tree", "member_path"]
