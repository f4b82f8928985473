"""A baseline detected from a range (`mcp>=2`, `^1.20`) resolved to a version that was published: the one the
repository's lock file pins, else the newest stable version the polls have seen that satisfies the range
(resolved again at every read of the team file, so a newer stable moves it). Without either, the range's floor
is used and said to be provisional. The range is kept beside the version (`Detection.specifier`).

Ranges are read with their ecosystem's rules: PEP 440 (`packaging`) for PyPI, npm's (`node-semver`) for npm,
crates.io and Packagist (a Cargo or Poetry bare version is a caret range), RubyGems' `~>` as its bounds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import nodesemver
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from watcher.core import untrusted
from watcher.core.errors import UntrustedInputError
from watcher.repos.detect import Detection, Read
from watcher.sources.versions import is_prerelease, parse, sort_key


@dataclass(frozen=True)
class Resolved:
    version: str
    how: str
    """Where the version came from, said for people: "locked in uv.lock", "newest stable satisfying >=2"."""


def resolve(detection: Detection, folder: str, read: Read, known: Sequence[str]) -> Resolved | None:
    """The published version a detected range stands for; None when the detection names one version already."""
    if not detection.specifier:
        return None
    locked = locked_version(detection, folder, read)
    if locked is not None:
        return locked
    stable = [v for v in known if parse(detection.registry, v).valid and not is_prerelease(detection.registry, v)]
    matching = [v for v in stable if satisfies(detection.registry, v, detection.specifier)]
    if matching:
        newest = max(matching, key=lambda v: sort_key(detection.registry, v))
        return Resolved(newest, f"newest stable satisfying {detection.specifier}")
    floor = detection.version or "0"
    why = "no published version seen yet" if not known else "no stable version seen satisfies it"
    return Resolved(floor, f"the range's lower bound, provisional: {why}")


def satisfies(registry: str, version: str, specifier: str) -> bool:
    """Whether ``version`` is inside ``specifier`` under the registry's own range rules (False when unreadable)."""
    if registry == "pypi":
        try:
            return SpecifierSet(specifier).contains(Version(version), prereleases=False)
        except (InvalidSpecifier, InvalidVersion):
            return False
    if registry == "rubygems":
        specifier = _gem_range(specifier)
    elif registry in ("crates", "packagist"):
        specifier = re.sub(r"(?<!\|)\|(?!\|)", "||", specifier.replace(",", " "))
    elif registry != "npm":
        return False
    try:
        return bool(nodesemver.satisfies(version, specifier, loose=True))
    except (ValueError, TypeError):
        return False


def _gem_range(specifier: str) -> str:
    """RubyGems' requirement (`~> 0.3`, `>= 1.2, < 2`) as the equivalent npm range."""
    parts = []
    for clause in (c.strip() for c in specifier.split(",")):
        pessimistic = re.fullmatch(r"~>\s*(\d+(?:\.\d+)*)", clause)
        if pessimistic:
            numbers = [int(n) for n in pessimistic.group(1).split(".")]
            upper = [*numbers[:-1]] if len(numbers) > 1 else [numbers[0]]
            upper[-1] += 1
            low = ".".join(str(n) for n in (numbers + [0, 0])[: max(3, len(numbers))])
            high = ".".join(str(n) for n in (upper + [0, 0])[:3])
            parts.append(f">={low} <{high}")
        else:
            parts.append(clause.replace(" ", ""))
    return " ".join(parts)


# --- lock files -------------------------------------------------------------------------------------------------

LockReader = Callable[[str, str], str | None]
"""(lock file text, package) → the version it pins, or None."""


def _toml_packages(text: str, package: str) -> str | None:
    """uv.lock, poetry.lock, pdm.lock and Cargo.lock: `[[package]]` tables with name and version."""
    try:
        data = untrusted.toml_document(text, "the lock file", limits=untrusted.MANIFEST)
    except UntrustedInputError:
        return None
    wanted = canonicalize_name(package)
    for entry in data.get("package") or []:
        if isinstance(entry, dict) and canonicalize_name(str(entry.get("name", ""))) == wanted:
            return str(entry.get("version")) if entry.get("version") else None
    return None


def _package_lock(text: str, package: str) -> str | None:
    try:
        data = untrusted.json_document(text, "the lock file", limits=untrusted.MANIFEST)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    entry = (data.get("packages") or {}).get(f"node_modules/{package}") or (data.get("dependencies") or {}).get(package)
    return str(entry["version"]) if isinstance(entry, dict) and entry.get("version") else None


def _yarn_lock(text: str, package: str) -> str | None:
    inside = False
    for line in text.splitlines():
        if line and not line.startswith(" "):
            names = [n.strip().strip('"') for n in line.rstrip(":").split(",")]
            inside = any(n.rsplit("@", 1)[0] == package for n in names if "@" in n.lstrip("@"))
        elif inside and line.strip().startswith("version"):
            return line.split(None, 1)[1].strip().strip('"')
    return None


def _composer_lock(text: str, package: str) -> str | None:
    try:
        data = untrusted.json_document(text, "the lock file", limits=untrusted.MANIFEST)
    except ValueError:
        return None
    listed = data.get("packages") if isinstance(data, dict) else None
    for entry in listed or []:
        if isinstance(entry, dict) and entry.get("name") == package and entry.get("version"):
            return str(entry["version"]).lstrip("v")
    return None


def _gemfile_lock(text: str, package: str) -> str | None:
    found = re.search(rf"^    {re.escape(package)} \(([^)]+)\)$", text, re.MULTILINE)
    return found.group(1) if found else None


def _nuget_lock(text: str, package: str) -> str | None:
    try:
        data = untrusted.json_document(text, "the lock file", limits=untrusted.MANIFEST)
    except ValueError:
        return None
    for framework in (data.get("dependencies") or {}).values() if isinstance(data, dict) else []:
        entry = framework.get(package) if isinstance(framework, dict) else None
        if isinstance(entry, dict) and entry.get("resolved"):
            return str(entry["resolved"])
    return None


LOCK_FILES: dict[str, tuple[tuple[str, LockReader], ...]] = {
    "pypi": (("uv.lock", _toml_packages), ("poetry.lock", _toml_packages), ("pdm.lock", _toml_packages)),
    "npm": (("package-lock.json", _package_lock), ("yarn.lock", _yarn_lock)),
    "crates": (("Cargo.lock", _toml_packages),),
    "packagist": (("composer.lock", _composer_lock),),
    "rubygems": (("Gemfile.lock", _gemfile_lock),),
    "nuget": (("packages.lock.json", _nuget_lock),),
}
"""Per registry, the lock files read (in the server's folder, then the repository's root) and their reader."""


def locked_version(detection: Detection, folder: str, read: Read) -> Resolved | None:
    """The version the repository's lock file pins for the detected package (the server's folder first)."""
    prefix = f"{folder.strip('/')}/" if folder.strip("/") else ""
    for where in dict.fromkeys((prefix, "")):
        for name, reader in LOCK_FILES.get(detection.registry, ()):
            text = read(where + name)
            version = reader(text, detection.package) if text else None
            if version and parse(detection.registry, version).valid:
                return Resolved(version, f"locked in {where + name}")
    return None
