"""Files inside a folder someone else fills (a checked-out repository, an installed suite, a run's results):
opened component by component from a root the watcher chose, no symbolic link followed at any step, only
regular files read, and never more than a cap.

Standard library only: the tree extraction (`watcher.suites.source.extract`) uses it under any Python the
package claims, also without the watcher's dependencies. A refusal is a `FileRefused` naming the path
relative to its root, never what a link points at nor anything read from outside the root.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""O_NONBLOCK: opening a FIFO planted in place of a file must not wait for a writer."""


class FileRefused(Exception):
    """A file inside a root that is not read: a link, outside the root, not a regular file, or over the cap."""

    def __init__(self, shown: str, problem: str, *, missing: bool = False) -> None:
        super().__init__(f"{shown}: {problem}")
        self.shown = shown
        self.problem = problem
        self.missing = missing
        """Nothing is there (as opposed to something that is refused)."""


def inside_parts(relative: str | PurePosixPath) -> tuple[str, ...]:
    """The components of a path that must stay inside its root: relative, without `..`, `.` dropped."""
    text = str(relative)
    if not text or text.startswith("/") or "\0" in text:
        raise FileRefused(text or "(empty path)", "expected a relative path inside its folder")
    parts = tuple(part for part in PurePosixPath(text).parts if part != ".")
    if ".." in parts:
        raise FileRefused(text, "'..' leaves its folder; refused")
    if not parts:
        raise FileRefused(text, "names the folder itself, not a file in it")
    return parts


def _refusal(shown: str, error: OSError, *, directory: bool) -> FileRefused:
    if error.errno == errno.ELOOP or (error.errno == errno.ENOTDIR and directory):
        what = "a symbolic link (or not a folder)" if directory else "a symbolic link"
        return FileRefused(shown, f"is {what}; links are never followed")
    if error.errno == errno.ENOENT:
        return FileRefused(shown, "does not exist", missing=True)
    return FileRefused(shown, f"cannot be opened ({error.strerror or error})")


@contextmanager
def open_dir_inside(root: Path, parts: tuple[str, ...], *, create: bool = False) -> Iterator[int]:
    """A descriptor of the folder `root/parts…`, reached without following a link (made on the way
    with mode 0755 when `create`). The root itself is the caller's: opened as given."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _refusal(".", exc, directory=True) from None
    try:
        for depth, part in enumerate(parts):
            shown = "/".join(parts[: depth + 1])
            if create:
                with suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _refusal(shown, exc, directory=True) from None
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def read_inside(root: Path, relative: str | PurePosixPath, *, limit: int) -> bytes:
    """The bytes of the regular file `root/relative`, refused when any component is a link, when it is not a
    regular file (a FIFO, a device, a folder), or when it holds more than `limit` bytes."""
    parts = inside_parts(relative)
    shown = "/".join(parts)
    with open_dir_inside(root, parts[:-1]) as folder:
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=folder)
        except OSError as exc:
            raise _refusal(shown, exc, directory=False) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(shown, "is not a regular file; refused")
        if info.st_size > limit:
            raise FileRefused(shown, f"is {info.st_size:,} bytes, over the limit of {limit:,}; not read")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(shown, f"grew past the limit of {limit:,} bytes while read; not read")
    return data


def exists_inside(root: Path, relative: str | PurePosixPath) -> bool:
    """Whether `root/relative` is there as anything (a link counts: reading it is then refused, not skipped).
    A link or a file on the way to it is a refusal, not an absence."""
    parts = inside_parts(relative)
    try:
        with open_dir_inside(root, parts[:-1]) as folder:
            os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
    except FileRefused as exc:
        if exc.missing:
            return False
        raise
    except FileNotFoundError:
        return False
    return True


def files_inside(root: Path, relative: str | PurePosixPath = ".") -> list[str]:
    """Every entry that is not a folder under `root/relative` (links included, so that reading one is a
    refusal the caller reports), as paths relative to `root`; folders reached through a link are not entered.
    A missing folder has none; a link or a file on the way to it is a FileRefused."""
    return sorted(path for path, _info in _entries(root, relative))


def check_tree_inside(root: Path, relative: str | PurePosixPath, *, limit: int) -> int:
    """Refuse the folder `root/relative` unless everything in it is a folder or a regular file (no link, no
    FIFO, no device) and the files hold at most `limit` bytes together; returns how many bytes they hold."""
    total = 0
    for path, info in _entries(root, relative):
        if stat.S_ISLNK(info.st_mode):
            raise FileRefused(path, "is a symbolic link; links are never followed")
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(path, "is not a regular file; refused")
        total += info.st_size
        if total > limit:
            raise FileRefused(str(relative), f"holds more than {limit:,} bytes; not read")
    return total


def _entries(root: Path, relative: str | PurePosixPath) -> Iterator[tuple[str, os.stat_result]]:
    """(path relative to root, lstat) of every entry that is not a folder, links not entered. A missing
    folder has none; a link or a file on the way to it is a FileRefused."""
    parts = () if str(relative) in ("", ".") else inside_parts(relative)
    prefix = "/".join(parts)
    try:
        with open_dir_inside(root, parts) as folder:
            for top, _dirs, names, top_fd in os.fwalk(".", dir_fd=folder, follow_symlinks=False):
                base = PurePosixPath(prefix, top) if prefix else PurePosixPath(top)
                for name in names:
                    yield str(base / name), os.stat(name, dir_fd=top_fd, follow_symlinks=False)
    except FileRefused as exc:
        if not exc.missing:
            raise


__all__ = [
    "FileRefused",
    "check_tree_inside",
    "exists_inside",
    "files_inside",
    "inside_parts",
    "open_dir_inside",
    "read_inside",
]
