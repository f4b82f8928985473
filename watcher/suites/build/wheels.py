"""A download cache of registry wheels shared by every environment build, read-only to every room.

A cold build in a room has package caches of its own (a shared writable cache would be a channel from
one team's build into another's), so without this every build downloads every wheel again. This folder
(`<envs_dir>/_wheels`) holds only wheel files whose bytes match the sha256 the registry lists for them:

- filled by the watcher's own code after a sandboxed build succeeds (`harvest`): for each distribution
  that the watcher's own wheels-only resolution outside the room named (`resolve.py`) AND the build
  installed, it asks the index (PEP 691 JSON) for that version's wheels, keeps those this interpreter
  can install, downloads them and keeps a file only when its hash matches the registry's. No package
  code runs, and what the build left behind can only make the harvest smaller: made-up `*.dist-info`
  names that nothing resolved are never fetched;
- kept within a total size (`suites.shared_wheels_max_mb`): after each harvest the oldest files (by the
  time they were added) are removed until the folder fits;
- bound read-only into the next builds' install rooms, whose installer takes the files from it
  (`--find-links`) instead of downloading them; resolution still asks the index, so versions are
  chosen as before. A package with no wheel (only an sdist) is downloaded and built in the room as
  before, and never lands here.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from packaging.tags import Tag, sys_tags
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from watcher.boundary import toolchain
from watcher.config import LoadedConfig
from watcher.core import untrusted
from watcher.suites.build.resolve import CACHE_FOLDER as RESOLVE_CACHE
from watcher.suites.build.resolve import resolve
from watcher.suites.settings import DEFAULT_SHARED_WHEELS_MAX_MB

log = logging.getLogger(__name__)

FOLDER = "_wheels"
"""The cache's folder inside `suites.envs_dir` (beside the environments, never inside one)."""
ACCEPT = "application/vnd.pypi.simple.v1+json"
MAX_WHEEL_BYTES = 256 * 1024 * 1024
"""A larger file is not cached (the build downloads it itself, as without the cache)."""
TIMEOUT = 30.0
PARALLEL = 4
MAX_NAMES = 500
"""Distributions asked for after one build (a build could leave any number of `*.dist-info` names)."""
BACKGROUND_NICE = 10
"""The harvest threads' nice value (setpriority per thread): other runs' servers and suites come first."""
HARVEST_SECONDS = 120.0
"""What is not fetched by then is left for a later build (the process must not wait for a stuck registry)."""
_DIST_INFO = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._]*)-(?P<version>[^-/]+)\.dist-info$")


@dataclass(frozen=True)
class SharedWheels:
    """Where the shared wheels live and the index they are checked against."""

    folder: Path
    index: str
    """A PEP 691 Simple index root (pip's `index-url`), e.g. a mirror's `…/simple`."""
    max_bytes: int = DEFAULT_SHARED_WHEELS_MAX_MB * 1024 * 1024
    """The cache's total size: after a harvest, the oldest files are removed until it fits."""

    def ensure(self) -> Path:
        """The folder, made by the watcher (never a link: a room's files must not decide where it points)."""
        if self.folder.is_symlink():
            raise OSError(f"{self.folder} is a link; the shared wheel cache must be a folder of the watcher's")
        self.folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.folder, 0o755)
        return self.folder

    def has(self, name: str, version: str) -> bool:
        """True when some wheel of `name` `version` is cached already."""
        return any(_wheel_of(path.name, name, version) for path in _entries(self.folder))

    def size(self) -> int:
        """Bytes of every cached wheel."""
        return sum(size for _added, _name, size, _path in _listing(self.folder))

    def evict(self) -> list[str]:
        """Remove the oldest files (by the time they were added) until the cache is within `max_bytes`;
        returns the names removed. A build reading a removed file keeps its open copy; one that listed it
        and did not open it yet downloads it itself."""
        listing = sorted(_listing(self.folder))
        total = sum(size for _added, _name, size, _path in listing)
        removed = []
        for _added, name, size, path in listing:
            if total <= self.max_bytes:
                break
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed.append(name)
            total -= size
        return removed


@dataclass
class Harvest:
    """What one harvest did: files added, distributions with no cacheable wheel, and errors (logged)."""

    added: list[str] = field(default_factory=list)
    cached: int = 0
    without_wheel: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    """The oldest files removed afterwards to keep the cache within its total size."""
    unresolved: list[str] = field(default_factory=list)
    """Distributions the build's room holds that the resolution outside it did not name: never fetched."""


def installed(folders: Iterable[Path]) -> list[tuple[str, str]]:
    """(name, version) of each `*.dist-info` folder's name in `folders` (only names are read, links are not
    followed: a build wrote them), at most MAX_NAMES of them."""
    found: set[tuple[str, str]] = set()
    for folder in folders:
        if folder.is_symlink():
            continue
        with contextlib.suppress(OSError):
            for entry in os.scandir(folder):
                match = _DIST_INFO.match(entry.name)
                if match and entry.is_dir(follow_symlinks=False):
                    found.add((str(canonicalize_name(match["name"])), match["version"]))
    return sorted(found)[:MAX_NAMES]


def venv_site_packages(venv: Path) -> list[Path]:
    lib = venv / "lib"
    if lib.is_symlink():
        return []
    with contextlib.suppress(OSError):
        return [p / "site-packages" for p in lib.iterdir() if p.name.startswith("python") and not p.is_symlink()]
    return []


def harvest_build(
    shared: SharedWheels, project: Path, sdk_package: str, sdk_version: str, installed_names: Iterable[tuple[str, str]]
) -> Harvest:
    """After a build in a room: resolve the server's requirements outside the room, wheels only
    (`resolve.py`), and harvest what that resolution names and the build installed; never raises."""
    uv = toolchain.uv()
    found = set(installed_names)
    if uv is None:
        return Harvest(unresolved=sorted(f"{n}=={v}" for n, v in found), errors=["no uv to resolve with"])
    resolution = resolve(
        project,
        sdk_package,
        sdk_version,
        uv=uv,
        python=toolchain.python(),
        index=shared.index,
        cache=shared.folder.parent / RESOLVE_CACHE,
    )
    for problem in resolution.problems:
        log.info("shared wheel cache: %s: nothing of it is harvested", problem)
    report = harvest(shared, sorted(found & resolution.pins))
    report.unresolved = sorted(f"{n}=={v}" for n, v in found - resolution.pins)
    return report


def harvest(
    shared: SharedWheels,
    wanted: Iterable[tuple[str, str]],
    *,
    tags: Iterable[Tag] | None = None,
    client: httpx.Client | None = None,
) -> Harvest:
    """Cache the registry's wheels of each (name, version) this interpreter can install, then keep the cache
    within its size; never raises. `wanted` is what a resolution outside the room named (`resolve.py`)."""
    report = Harvest()
    # In the interpreter's order of preference: the installer takes the first tag a wheel has.
    preference = {tag: rank for rank, tag in enumerate(tags if tags is not None else sys_tags())}
    try:
        folder = shared.ensure()
    except OSError as exc:
        report.errors.append(str(exc))
        return report
    missing = []
    for name, version in wanted:
        if shared.has(name, version):
            report.cached += 1
        else:
            missing.append((name, version))

    deadline = time.monotonic() + HARVEST_SECONDS

    def one(http: httpx.Client, name: str, version: str) -> None:
        if time.monotonic() > deadline:
            report.errors.append(f"{name}=={version}: not fetched within {HARVEST_SECONDS:.0f} s")
            return
        try:
            best = _best_wheel(http, shared.index, name, version, preference)
            if best is None:
                report.without_wheel.append(f"{name}=={version}")
                return
            filename, url, sha256, size = best
            if size is not None and size > shared.max_bytes:
                report.errors.append(f"{filename}: larger than {shared.max_bytes} bytes, the whole cache's size")
                return
            _download(http, url, sha256, folder / filename, deadline, min(MAX_WHEEL_BYTES, shared.max_bytes))
            report.added.append(filename)
        except (httpx.HTTPError, OSError, ValueError) as exc:
            report.errors.append(f"{name}=={version}: {_why(exc)}")

    own = client is None
    http = client or httpx.Client(timeout=TIMEOUT, follow_redirects=True)
    try:
        with ThreadPoolExecutor(max_workers=PARALLEL, thread_name_prefix="wheels", initializer=_yield_cpu) as pool:
            list(pool.map(lambda wanted: one(http, *wanted), missing))
    finally:
        if own:
            http.close()
    report.evicted = shared.evict()
    if report.evicted:
        log.info("shared wheel cache: %d oldest file(s) removed to stay within its size", len(report.evicted))
    if report.errors:
        log.warning("shared wheel cache: %d not cached: %s", len(report.errors), "; ".join(report.errors[:3]))
    return report


def _best_wheel(
    http: httpx.Client, index: str, name: str, version: str, preference: dict[Tag, int]
) -> tuple[str, str, str, int | None] | None:
    """(file name, URL, sha256, size when listed) of the wheel of `name` `version` the installer would pick
    here (the index's, not yanked, with a sha256); None when there is none (only an sdist, or not on the
    index at all)."""
    page_url = f"{index.rstrip('/')}/{canonicalize_name(name)}/"
    response = http.get(page_url, headers={"Accept": ACCEPT})
    if response.status_code == 404:
        return None  # e.g. the server's own project, installed from its folder
    response.raise_for_status()
    data = untrusted.answer_json(response.content, page_url)
    entries = data.get("files") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"the index's page of {name} is not a PEP 691 project page")
    chosen: list[tuple[int, str, str, str, int | None]] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        filename, url, hashes = entry.get("filename"), entry.get("url"), entry.get("hashes")
        sha256 = hashes.get("sha256") if isinstance(hashes, dict) else None
        if not (isinstance(filename, str) and isinstance(url, str) and isinstance(sha256, str)):
            continue  # a file with no sha256 cannot be checked, so it is not cached
        if entry.get("yanked") or not _wheel_of(filename, name, version):
            continue
        size = entry.get("size")
        if isinstance(size, int) and size > MAX_WHEEL_BYTES:
            continue
        ranks = [preference[tag] for tag in parse_wheel_filename(filename)[3] if tag in preference]
        if ranks:
            listed = size if isinstance(size, int) else None
            chosen.append((min(ranks), filename, str(httpx.URL(page_url).join(url)), sha256.lower(), listed))
    if not chosen:
        return None
    _rank, filename, url, sha256, listed = min(chosen, key=lambda c: c[:4])
    return filename, url, sha256, listed


def _download(http: httpx.Client, url: str, sha256: str, dest: Path, deadline: float, limit: int) -> None:
    """Download to a temporary file beside `dest`; it becomes `dest` only when its hash is the registry's
    and it is at most `limit` bytes."""
    digest = hashlib.sha256()
    handle, partial = tempfile.mkstemp(dir=dest.parent, prefix=".partial-")
    try:
        with os.fdopen(handle, "wb") as out, http.stream("GET", url) as response:
            response.raise_for_status()
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise ValueError(f"{dest.name}: larger than {limit} bytes")
                if time.monotonic() > deadline:  # a registry trickling bytes
                    raise ValueError(f"{dest.name}: not downloaded within {HARVEST_SECONDS:.0f} s")
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != sha256:
            raise ValueError(f"{dest.name}: sha256 {digest.hexdigest()} is not the registry's {sha256}")
        os.chmod(partial, 0o444)
        os.replace(partial, dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


def _yield_cpu() -> None:
    """Lower this thread's priority (Linux: per thread): other runs' servers and suites come first."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)


def _why(exc: Exception) -> str:
    """An error without its URL (an index URL may carry credentials)."""
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, httpx.HTTPError):
        return type(exc).__name__
    return str(exc)


def _entries(folder: Path) -> list[Path]:
    with contextlib.suppress(OSError):
        return [p for p in folder.iterdir() if p.suffix == ".whl"]
    return []


def _listing(folder: Path) -> list[tuple[float, str, int, Path]]:
    """(time added, name, size, path) of each cached wheel; the name breaks ties in the order."""
    found = []
    for path in _entries(folder):
        with contextlib.suppress(OSError):
            info = path.lstat()
            found.append((info.st_mtime, path.name, info.st_size, path))
    return found


def _wheel_of(filename: str, name: str, version: str) -> bool:
    """True when `filename` is a well-formed wheel name of `name` `version` (nothing else is ever stored)."""
    if "/" in filename or "\\" in filename or filename.startswith("."):
        return False
    try:
        wheel_name, wheel_version, _build, _tags = parse_wheel_filename(filename)
        return wheel_name == canonicalize_name(name) and wheel_version == Version(version)
    except (InvalidWheelFilename, InvalidVersion):
        return False


def for_config(loaded: LoadedConfig) -> SharedWheels | None:
    """The shared cache `suites.shared_wheels` asks for (None: off), checked against the Python index the
    watcher polls (the first `pypi` SDK source's `url:`, else pip's configured index)."""
    config = loaded.config
    if not config.suites.shared_wheels:
        return None
    from watcher.sources import pypi  # late: only a build needs it

    urls = [s.url for s in config.sdks if s.registry == "pypi" and s.url]
    index = (urls[0] if urls else pypi.default_base()).rstrip("/")
    max_bytes = config.suites.shared_wheels_max_mb * 1024 * 1024
    return SharedWheels(loaded.resolve(config.suites.envs_dir) / FOLDER, index, max_bytes)
