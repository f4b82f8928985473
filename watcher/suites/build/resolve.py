"""Which distributions a Python build needs, resolved by the watcher outside the build's room, wheels only.

The shared wheel cache (`wheels.py`) is filled only with distributions this resolution names. What the
build left in its room (`*.dist-info` folders) is written by the team's own code, so on its own it says
nothing: a build could name forty genuine packages it never installed and have the watcher fetch and keep
them. Here the watcher asks `uv pip compile` itself, on the host, for the requirements it can read without
running any of the team's code: the project's static `[project].dependencies` and `[build-system].requires`
(read from the server's own folder, never from the build's copy, which the build could rewrite) plus the
SDK pin. `--only-binary :all:` means uv reads wheel metadata only: no build backend runs, so no package
code runs on the host. A requirement set that cannot be resolved from wheels gives nothing to harvest.

The harvest then takes only what both say: resolved here and found installed by the build.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from watcher.boundary.launch import Host, HostReason
from watcher.boundary.process import run_command, scrubbed_env
from watcher.core import untrusted
from watcher.core.errors import UntrustedInputError

log = logging.getLogger(__name__)

RESOLVE_SECONDS = 60.0
"""One resolution; a registry that does not answer by then leaves nothing to harvest for this build."""
MAX_REQUIREMENTS = 200
"""Requirements read from one pyproject.toml (a longer list is cut, which only makes the harvest smaller)."""
CACHE_FOLDER = "_resolve"
"""uv's cache for these resolutions, inside `suites.envs_dir` beside `_wheels` (never bound into a room)."""


@dataclass
class Resolution:
    """The (name, version) pins a wheels-only resolution gave, and why a set gave none."""

    pins: set[tuple[str, str]] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)


def static_requirements(project: Path) -> tuple[list[str], list[str]]:
    """(runtime, build) requirements written in the project's pyproject.toml; dynamic ones are not read
    (they would need the build backend)."""
    try:
        data = untrusted.load_toml(project, "pyproject.toml", limits=untrusted.MANIFEST)
    except (OSError, UntrustedInputError):
        return [], []
    meta = data.get("project")
    runtime: list[str] = []
    if isinstance(meta, dict) and "dependencies" not in (meta.get("dynamic") or []):
        runtime = _valid(meta.get("dependencies"))
    system = data.get("build-system")
    build = _valid(system.get("requires")) if isinstance(system, dict) else []
    return runtime, build


def _valid(items: object) -> list[str]:
    """The well-formed requirements of a list (anything else in the file is ignored)."""
    kept = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str) and "\n" not in item:
            with contextlib.suppress(InvalidRequirement):
                if not Requirement(item).url:  # a direct URL is fetched by the build, not from the index
                    kept.append(item)
    return kept[:MAX_REQUIREMENTS]


def resolve(
    project: Path, sdk_package: str, sdk_version: str, *, uv: str, python: str, index: str, cache: Path
) -> Resolution:
    """The pins of the server's runtime requirements (with the SDK pinned, as the build pins it) and of
    its build requirements, each resolved from wheels only by `uv pip compile` on the host."""
    runtime, build = static_requirements(project)
    pin = f"{sdk_package}=={sdk_version}"
    result = Resolution()
    sets = [("runtime", [*runtime, pin], [pin])]
    if build:
        sets.append(("build", build, []))
    for label, requirements, overrides in sets:
        pins, problem = _compile(requirements, overrides, uv=uv, python=python, index=index, cache=cache)
        result.pins |= pins
        if problem:
            result.problems.append(f"{label} requirements: {problem}")
    return result


def _compile(
    requirements: Iterable[str], overrides: Iterable[str], *, uv: str, python: str, index: str, cache: Path
) -> tuple[set[tuple[str, str]], str | None]:
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mcp-watcher-resolve-") as folder:
        work = Path(folder)
        (work / "requirements.in").write_text("\n".join(requirements) + "\n", encoding="utf-8")
        (work / "overrides.txt").write_text("\n".join(overrides) + "\n", encoding="utf-8")
        command = [
            uv,
            "pip",
            "compile",
            "--no-config",  # a uv.toml or pyproject.toml around must not choose the index or allow builds
            "--only-binary",
            ":all:",  # metadata from wheels only: no build backend runs here
            "--python",
            python,
            "--index-url",
            index,
            "--cache-dir",
            str(cache),
            "--overrides",
            str(work / "overrides.txt"),
            "--no-header",
            "--no-annotate",
            "--quiet",
            "--output-file",
            str(work / "pins.txt"),
            str(work / "requirements.in"),
        ]
        run = run_command(
            command,
            cwd=work,
            env={**scrubbed_env(installer=True, tmpdir=work).env, "UV_PYTHON_DOWNLOADS": "never"},
            timeout=RESOLVE_SECONDS,
            log_path=work / "resolve.log",
            launcher=Host(HostReason.RESOLVE),
        )
        if not run.ok:
            # The log is not quoted: uv may name the index URL, which can carry credentials.
            return set(), f"not resolvable from wheels only (uv pip compile: {run.describe()})"
        return _pins((work / "pins.txt").read_text(encoding="utf-8")), None


def _pins(text: str) -> set[tuple[str, str]]:
    """(canonical name, version) of each `name==version` line of uv's output."""
    pins = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        with contextlib.suppress(InvalidRequirement):
            requirement = Requirement(line)
            exact = [s.version for s in requirement.specifier if s.operator == "=="]
            if len(exact) == 1:
                pins.add((str(canonicalize_name(requirement.name)), exact[0]))
    return pins
