"""Isolated environments with exactly one SDK version, cached per (server, version, server files).

Python: `uv venv` + `uv pip install <project copy>` with the SDK pinned by an override (the
project's own pin on the SDK must not win), pip as the fallback. TypeScript: a copy of the
project whose package.json pins the SDK to the version, then `npm install`.

Every build step runs inside the run boundary when the sandbox is on (`sandbox.py`): writable only the
environment's own folder, network only to the registries, its package caches private to the build
(`<env>/.cache`, removed afterwards) so no cache carries one team's build into another's. Registry
wheels come read-only from the shared, hash-checked download cache when there is one (`wheels.py`);
after a build in a room the watcher adds the wheels it installed to that cache.

A built environment is sealed: read-only (owned by the watcher, no write bit), with a digest of every
file, link and mode recorded in its marker. A run that finds the digest changed rebuilds it instead
of running in it.

A failed install is a result (with the last lines of the installer's output), never an exception.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import logging
import os
import shutil
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from watcher.boundary import sandbox as sandboxes
from watcher.boundary import toolchain
from watcher.boundary.launch import Host, HostReason, Launcher
from watcher.boundary.process import run_command, scrubbed_env
from watcher.core import untrusted
from watcher.core.errors import ToolMissing
from watcher.core.run_report import InstallPart
from watcher.suites.build import blame
from watcher.suites.build import wheels as shared
from watcher.suites.build.declared import build_declared
from watcher.suites.build.indexes import learn_urls, with_sources

log = logging.getLogger(__name__)

ENV_FORMAT = 2
"""Bump when the layout of an environment changes: old caches are then rebuilt."""

# Never part of a server's own files (build output, caches, installed dependencies, our artifacts).
IGNORED_NAMES = {
    "__pycache__",
    "node_modules",
    ".venv",
    "venv",
    ".git",
    ".pytest_cache",
    ".ruff_cache",
    ".mypy_cache",
    "build",
    "dist",
    "package-lock.json",
    "baseline-snapshot",
    "conformance-baseline.yml",
}
IGNORED_SUFFIXES = (".egg-info", ".pyc")
READY_MARKER = "mcp-watcher-env.json"
CACHE_DIR = ".cache"
"""The build's own package caches (uv, pip, npm): inside the environment while it builds, then removed."""
_NOT_SEALED = {READY_MARKER, "install.log", CACHE_DIR}


@dataclass
class EnvResult:
    ok: bool
    language: str
    sdk_package: str
    sdk_version: str
    path: str
    cached: bool = False
    seconds: float = 0.0
    installer: str = ""
    error: str | None = None
    evidence: str = ""
    """The last lines of the installer's output when it failed."""
    log: str = ""
    bin_dirs: list[str] = field(default_factory=list)
    project_dir: str = ""
    """The server's project folder inside the environment (the server's working directory)."""
    digest: str = ""
    """The sealed environment's digest (every file's path, mode and content; links by target)."""
    rebuilt: str | None = None
    """Why a cached environment was rebuilt (its digest no longer matched), when it was."""
    sandboxed: bool = False
    watcher_fault: str | None = None
    """Why the build failed when that was the watcher's own doing (`blame`: registry unreachable, its
    certificate not trusted, the registry down, a tool missing): the run is an error, not the server's fail."""
    fault_rule: str | None = None
    egress_refused: list[dict[str, object]] = field(default_factory=list)
    """What the install rooms' egress proxy refused (or let through under `suites.egress: audit`) (`egress.py`)."""

    def as_dict(self) -> InstallPart:
        return {
            "ok": self.ok,
            "language": self.language,
            "sdk_package": self.sdk_package,
            "sdk_version": self.sdk_version,
            "path": self.path,
            "cached": self.cached,
            "seconds": self.seconds,
            "installer": self.installer,
            "error": self.error,
            "evidence": self.evidence,
            "log": self.log,
            "bin_dirs": list(self.bin_dirs),
            "project_dir": self.project_dir,
            "digest": self.digest,
            "rebuilt": self.rebuilt,
            "sandboxed": self.sandboxed,
            "watcher_fault": self.watcher_fault,
            "fault_rule": self.fault_rule,
            "egress_refused": [dict(refusal) for refusal in self.egress_refused],
        }


def files_digest(project: Path) -> str:
    """A hash of the server's own files: names and contents, ignoring build output and caches."""
    digest = hashlib.sha256()
    for path in sorted(_project_files(project)):
        rel = path.relative_to(project).as_posix()
        digest.update(rel.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _project_files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not _ignored(d)]
        for name in filenames:
            if not _ignored(name):
                yield Path(dirpath) / name


def _ignored(name: str) -> bool:
    return name in IGNORED_NAMES or name.endswith(IGNORED_SUFFIXES)


def _copy_project(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, ignore=lambda _dir, names: [n for n in names if _ignored(n)], symlinks=True)


def env_key(
    language: str, sdk_package: str, sdk_version: str, project: Path, prepare: Sequence[Sequence[str]] = ()
) -> str:
    material: dict[str, object] = {
        "format": ENV_FORMAT,
        "language": language,
        "package": sdk_package,
        "version": sdk_version,
        "files": files_digest(project),
        # A venv is tied to its interpreter; node_modules to Node's major version.
    }
    if language == "other":  # a declared build: its steps are part of what it is (its tools come from PATH)
        material["runtime"], material["prepare"] = "declared", [list(step) for step in prepare]
    else:
        material["runtime"] = toolchain.python() if language == "python" else toolchain.node_version().split(".")[0]
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """One builder per environment, also across processes (two workers, a CLI run beside the service)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def prepare_env(
    *,
    server_name: str,
    language: str,
    project: Path,
    sdk_package: str,
    sdk_version: str,
    envs_dir: Path,
    timeout: float,
    secret_names: set[str],
    cancel: threading.Event | None = None,
    prepare: Sequence[Sequence[str]] = (),
    boundary: sandboxes.Sandbox,
    shared_wheels: shared.SharedWheels | None = None,
) -> EnvResult:
    """Return a ready environment for the server under `sdk_version`, building it when not cached (inside
    `boundary`'s room when it is active). A cached one is used only when its sealed digest still matches.
    `shared_wheels` (used only with a room): the download cache the build reads and the watcher fills.
    A `boundary` that is refused (a room asked for, none to be had) builds nothing: the result says why."""
    started = time.monotonic()
    boundary = with_sources(boundary)
    refusal = f"not built: {boundary.reason}" if boundary.refused else None
    if refusal is None and not project.is_dir():
        refusal = f"the server's project folder does not exist: {project}"
    if refusal is not None:
        return EnvResult(
            ok=False, language=language, sdk_package=sdk_package, sdk_version=sdk_version, path="", error=refusal
        )
    key = env_key(language, sdk_package, sdk_version, project, prepare)
    env_dir = envs_dir / _safe(server_name) / f"{_safe(sdk_version)}-{key}"
    result = EnvResult(ok=False, language=language, sdk_package=sdk_package, sdk_version=sdk_version, path=str(env_dir))
    with locked(env_dir.with_name(env_dir.name + ".lock")):
        marker = env_dir / READY_MARKER
        if marker.exists():
            saved = _read_marker(marker)
            found = env_digest(env_dir)
            if saved is not None and saved.get("digest") == found:
                result.ok, result.cached = True, True
                result.sandboxed = bool(saved.get("sandboxed"))  # how it was built, not how it was found
                result.installer = saved.get("installer", "")
                result.bin_dirs = saved["bin_dirs"]
                result.project_dir = saved["project_dir"]
                result.digest = found
                result.log = str(env_dir / "install.log")
                result.seconds = time.monotonic() - started
                return result
            result.rebuilt = "its sealed digest no longer matches (changed after it was built): rebuilt"
            log.warning("environment %s changed after it was sealed; rebuilding it", env_dir)
        # A folder without the marker is a build that died half-way: start over.
        remove_env(env_dir)
        env_dir.mkdir(parents=True)
        builders: dict[str, Callable[[BuildContext], None]] = {
            "python": _build_python,
            "typescript": _build_typescript,
            "other": functools.partial(build_declared, prepare=prepare),
        }
        build = builders[language]
        room = boundary if boundary.active else None
        wheels = _usable(shared_wheels) if room is not None and language == "python" else None
        context = BuildContext(env_dir, project, sdk_package, sdk_version, timeout, secret_names, cancel, result, room)
        context.shared_wheels, context.server, context.language = wheels, server_name, language
        result.sandboxed = room is not None
        try:
            build(context)
        except ToolMissing as exc:
            result.ok, result.error = False, str(exc)
            result.watcher_fault, result.fault_rule = str(exc), "tool-missing"
        if result.ok:
            # Only the names of what the build installed (its venv, and its build environments through
            # the private uv cache) are read; the bytes come from the registry, checked against its hashes.
            wanted = shared.installed([*shared.venv_site_packages(env_dir / "venv"), *_unpacked(env_dir)])
            shutil.rmtree(env_dir / CACHE_DIR, ignore_errors=True)
            seal(env_dir)
            if wheels is not None:
                # Here, not in the background while the run goes on: there it competed with the run's
                # own installs and suite for the network and the CPU, and cost a first run more. Only
                # what a resolution outside the room names is fetched (`resolve.py`).
                got = shared.harvest_build(wheels, project, sdk_package, sdk_version, wanted)
                log.info(
                    "shared wheel cache: %d added, %d cached already, %d without a wheel, %d not resolved",
                    len(got.added),
                    got.cached,
                    len(got.without_wheel),
                    len(got.unresolved),
                )
            result.seconds = time.monotonic() - started
            result.digest = env_digest(env_dir)
            marker.unlink(missing_ok=True)  # whatever the build put there (a link would be followed)
            marker.write_text(
                json.dumps(
                    {
                        "installer": result.installer,
                        "bin_dirs": result.bin_dirs,
                        "project_dir": result.project_dir,
                        "sdk_package": sdk_package,
                        "sdk_version": sdk_version,
                        "seconds": round(result.seconds, 2),
                        "digest": result.digest,
                        "sandboxed": result.sandboxed,
                    },
                    indent=2,
                ),
                encoding="utf-8",
            )
            os.chmod(marker, 0o444)
            os.chmod(env_dir, _read_only(env_dir.stat().st_mode))
        else:
            result.seconds = time.monotonic() - started
            # Keep only the log of a failed build; the next run tries again from scratch.
            install_log = env_dir / "install.log"
            keep = install_log.read_bytes() if install_log.is_file() and not install_log.is_symlink() else b""
            remove_env(env_dir)
            env_dir.mkdir(parents=True, exist_ok=True)
            (env_dir / "install.log").write_bytes(keep)
        return result


def _usable(wheels: shared.SharedWheels | None) -> shared.SharedWheels | None:
    """The shared cache, its folder made; None (builds download everything) when it cannot be."""
    if wheels is None:
        return None
    try:
        wheels.ensure()
    except OSError as exc:
        log.warning("the shared wheel cache is not used: %s", exc)
        return None
    return wheels


def _unpacked(env_dir: Path) -> list[Path]:
    """The folders of the build's own uv cache holding unpacked wheels (the build environments' too)."""
    archive = env_dir / CACHE_DIR / "uv" / "archive-v0"
    with contextlib.suppress(OSError):
        return [p for p in archive.iterdir() if p.is_dir() and not p.is_symlink()]
    return []


def _read_marker(marker: Path) -> dict[str, Any] | None:
    try:
        saved = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def env_digest(env_dir: Path) -> str:
    """Every entry of a built environment (the marker, the log and the build caches aside): its path and
    mode, a file's content, a link's target. Links are never followed."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(env_dir):
        base = Path(dirpath)
        if base == env_dir:
            dirnames[:] = [d for d in dirnames if d not in _NOT_SEALED]
            filenames = [f for f in filenames if f not in _NOT_SEALED]
        dirnames.sort()
        for name in sorted([*filenames, *(d for d in dirnames if (base / d).is_symlink())]):
            path = base / name
            info = path.lstat()
            rel = path.relative_to(env_dir).as_posix()
            digest.update(f"{rel}\0{stat.S_IMODE(info.st_mode):o}\0".encode())
            if stat.S_ISLNK(info.st_mode):
                digest.update(b"L" + os.readlink(path).encode(errors="surrogateescape"))
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    digest.update(hashlib.file_digest(handle, "sha256").digest())
            digest.update(b"\n")
        dirnames[:] = [d for d in dirnames if not (base / d).is_symlink()]
    return digest.hexdigest()


def _read_only(mode: int) -> int:
    return stat.S_IMODE(mode) & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def seal(env_dir: Path) -> None:
    """Make a built environment read-only and the watcher's (a room's user built it when we are root)."""
    uid, gid = os.geteuid(), os.getegid()
    for dirpath, dirnames, filenames in os.walk(env_dir, topdown=False):
        for name in [*filenames, *dirnames]:
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            if (info.st_uid, info.st_gid) != (uid, gid):
                os.chown(path, uid, gid, follow_symlinks=False)
            if not stat.S_ISLNK(info.st_mode):
                os.chmod(path, _read_only(info.st_mode))
    os.chown(env_dir, uid, gid)


def remove_env(env_dir: Path) -> None:
    """Remove an environment, sealed or not (its folders get their write bit back first)."""
    if not env_dir.exists():
        return
    for dirpath, dirnames, _ in os.walk(env_dir):
        for name in [".", *dirnames]:
            path = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                if not os.path.islink(path):
                    os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) | stat.S_IRWXU)
    shutil.rmtree(env_dir, ignore_errors=True)


@dataclass
class BuildContext:
    """What both builders share: the folder to build in, the SDK to pin, the time allowed, the child's
    scrubbed environment, the install log and the result being filled in."""

    env_dir: Path
    project: Path
    """The server's own folder; the builders work on a copy of it (`src`)."""
    sdk_package: str
    sdk_version: str
    timeout: float
    secret_names: set[str]
    cancel: threading.Event | None
    result: EnvResult
    boundary: sandboxes.Sandbox | None = None
    """The sandbox the steps run in (None: no room, the steps run as the watcher's children)."""
    deadline: float = 0.0
    shared_wheels: shared.SharedWheels | None = None
    """The shared download cache the installer reads (read-only in the room), when there is one."""
    server: str = ""
    language: str = "python"

    def find_links(self, env: dict[str, str], variable: str, separator: str | None) -> list[str]:
        """The installer's options to take wheels from the shared cache (nothing without one). The
        machine's own find-links (`variable`) are repeated: an option on the command line replaces them."""
        if self.shared_wheels is None:
            return []
        own = [link for link in env.get(variable, "").split(separator) if link.strip()]
        return [arg for link in [*own, str(self.shared_wheels.folder)] for arg in ("--find-links", link.strip())]

    @property
    def src(self) -> Path:
        return self.env_dir / "project"

    @property
    def log(self) -> Path:
        return self.env_dir / "install.log"

    def start(self, installer: str, bin_dirs: list[Path]) -> None:
        """Copy the project, fill in where things are, and start the clock."""
        _copy_project(self.project, self.src)
        self.result.log = str(self.log)
        self.result.project_dir = str(self.src)
        self.result.bin_dirs = [str(folder) for folder in bin_dirs]
        self.result.installer = installer
        self.deadline = time.monotonic() + self.timeout
        if self.boundary is not None:
            self.boundary.hand_over(self.env_dir)

    def child_env(self, path_prepend: list[Path] | None = None) -> dict[str, str]:
        """An installer's environment: no secrets; temporary files inside the environment's folder (in a
        room: its private /tmp, and package caches of its own that go when the build is done)."""
        env = scrubbed_env(
            secret_names=self.secret_names, installer=True, tmpdir=self.env_dir, path_prepend=path_prepend or ()
        ).env
        if self.boundary is not None:
            # In a room the build's package caches are its own (a shared writable cache would carry one
            # team's build into another's); without one the build could write anywhere anyway.
            cache = self.env_dir / CACHE_DIR
            env.update(
                UV_CACHE_DIR=str(cache / "uv"),
                PIP_CACHE_DIR=str(cache / "pip"),
                npm_config_cache=str(cache / "npm"),
                XDG_CACHE_HOME=str(cache),
                TMPDIR="/tmp",  # the room's private /tmp
            )
        return env

    def launcher(self, step: str = "", env: dict[str, str] | None = None) -> Launcher:
        """The room for one build step: the environment's folder writable, the toolchain and the local
        package indexes readable, network to the registries only. No room only under `suites.sandbox: none`
        (prepare_env refuses a build when a room was asked for and cannot be had)."""
        if self.boundary is None:
            return Host(HostReason.OPTED_OUT)
        cache = [self.shared_wheels.folder] if self.shared_wheels is not None else []
        return self.boundary.room(
            readable=[*toolchain.runtime_paths(), *sandboxes.local_package_sources(), *cache],
            writable=[self.env_dir],
            network="registry",
            protected=[self.log],  # the watcher appends to it: the build must not swap it for a link
            audit_as=(self.server, step),
            learn_from=learn_urls(self.language, self.sdk_package, env or {}, self.boundary.index_sources()),
        )

    def run(self, step: str, command: list[str], *, cwd: Path, env: dict[str, str], shown: str | None = None) -> bool:
        """Run one installer step within what is left of the time, logging it; a failure is put in the result."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            self.fail(f"install timed out after {self.timeout:.0f} s")
            return False
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(f"$ {shown or ' '.join(command)}\n")
        run = run_command(
            command,
            cwd=cwd,
            env=env,
            timeout=remaining,
            log_path=self.log,
            cancel=self.cancel,
            launcher=(launcher := self.launcher(step, env)),
        )
        self.result.egress_refused += [refusal.as_dict() for refusal in launcher.refusals()]
        if not run.ok:
            # The proxy's 502 is what the installer saw; the proxy says why (an index down, a name unknown).
            said = "".join(f"\negress proxy: {text}" for text in launcher.egress_failures()[-5:])
            self.fail(f"{step} failed ({run.describe()})", run.tail + said)
            fault = (
                None if run.timed_out or run.cancelled else blame.watcher_fault(said) or blame.watcher_fault(run.tail)
            )
            if fault is not None:
                self.result.watcher_fault, self.result.fault_rule = fault.reason, fault.rule
        return run.ok

    def fail(self, error: str, evidence: str = "") -> None:
        self.result.ok, self.result.error = False, error
        if evidence:
            self.result.evidence = evidence


def _build_python(ctx: BuildContext) -> None:
    venv = ctx.env_dir / "venv"
    uv = toolchain.uv()
    ctx.start("uv" if uv else "pip", [venv / "bin"])
    child = ctx.child_env()
    pin = f"{ctx.sdk_package}=={ctx.sdk_version}"
    python = str(venv / "bin" / "python")
    if uv:
        overrides = ctx.env_dir / "overrides.txt"
        # An override, not a constraint: the project may pin the SDK it ships on today.
        overrides.write_text(pin + "\n", encoding="utf-8")
        child["UV_PYTHON_DOWNLOADS"] = "never"
        steps = [
            ("uv venv", [uv, "venv", "--quiet", "--python", toolchain.python(), str(venv)]),
            (
                "uv pip install",
                [uv, "pip", "install", "--python", python, "--override", str(overrides)]
                + [*ctx.find_links(child, "UV_FIND_LINKS", ","), str(ctx.src), pin],
            ),
        ]
    else:
        links = ctx.find_links(child, "PIP_FIND_LINKS", None)
        # pip has no overrides: install the project's other dependencies with the SDK pinned,
        # then the project itself without dependencies.
        wanted = [*_other_requirements(ctx.src, ctx.sdk_package), pin]
        steps = [
            ("python -m venv", [toolchain.python(), "-m", "venv", str(venv)]),
            (
                "pip install dependencies",
                [python, "-m", "pip", "install", "--disable-pip-version-check", *links, *wanted],
            ),
            (
                "pip install project",
                [python, "-m", "pip", "install", "--disable-pip-version-check", *links] + ["--no-deps", str(ctx.src)],
            ),
        ]
    for step, command in steps:
        if not ctx.run(step, command, cwd=ctx.env_dir, env=child):
            return
    ctx.result.ok = True


def _other_requirements(project: Path, sdk_package: str) -> list[str]:
    """The project's declared dependencies (pyproject.toml), without its requirement on the SDK."""
    try:
        data = untrusted.load_toml(project.parent, project / "pyproject.toml", limits=untrusted.MANIFEST)
    except ValueError:  # absent, a link, too large, not TOML: the project's own pins are then left out
        return []
    sdk = canonicalize_name(sdk_package)
    kept = []
    for line in data.get("project", {}).get("dependencies", []):
        try:
            if canonicalize_name(Requirement(line).name) != sdk:
                kept.append(line)
        except InvalidRequirement:
            kept.append(line)
    return kept


def _build_typescript(ctx: BuildContext) -> None:
    src, package, version = ctx.src, ctx.sdk_package, ctx.sdk_version
    ctx.start("npm", [src / "node_modules" / ".bin", toolchain.node_bin_dir()])
    manifest_path = src / "package.json"
    try:
        manifest = untrusted.load_json(src.parent, manifest_path, limits=untrusted.MANIFEST, expect=dict)
    except ValueError as exc:
        ctx.fail(f"{ctx.project / 'package.json'}: cannot read the package manifest: {exc}")
        return
    # Pin exactly: the SDK under test replaces whatever range the project declares.
    for section in ("devDependencies", "peerDependencies", "optionalDependencies"):
        if package in manifest.get(section, {}):
            del manifest[section][package]
    manifest.setdefault("dependencies", {})[package] = version
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    command = [*toolchain.npm_command(), "install", "--no-audit", "--no-fund", "--no-update-notifier"]
    child = ctx.child_env(path_prepend=[toolchain.node_bin_dir()])
    if not ctx.run("npm install", command, cwd=src, env=child, shown=f"npm install ({package}@{version})"):
        return
    installed = src / "node_modules" / package / "package.json"
    try:
        got = untrusted.load_json(src.parent, installed, limits=untrusted.MANIFEST, expect=dict).get("version")
    except ValueError:
        got = None
    if got != version:
        ctx.fail(f"npm installed {package} {got!r}, not {version!r}")
        return
    ctx.result.ok = True
