"""Which MCP SDK a repository uses, and which version, from its manifests (parsed, never pattern-guessed
where a parser exists): pyproject.toml and requirements*.txt (packaging's Requirement), package.json and
composer.json (JSON), Cargo.toml (TOML), *.csproj and pom.xml (XML without DTDs or entities), go.mod, Gemfile
and build.gradle* (their own small line grammars: no Python parser exists for Go's, Ruby's or Groovy's). JSON,
TOML and XML are read by the one loader for outside files (`watcher.core.untrusted`), with its caps."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from typing import Literal, NotRequired

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from typing_extensions import TypedDict

from watcher.core import untrusted
from watcher.core.errors import UntrustedInputError


class DetectionEntry(TypedDict):
    """A detection as the repository state keeps it (JSON) and the messages, `status` and the proposal read it."""

    language: str
    registry: str
    package: str
    version: str | None
    manifest: str
    specifier: str | None
    resolved: NotRequired[str | None]
    """How a range was resolved to the baseline (watcher.repos.resolve), for a team file's servers."""


@dataclass(frozen=True)
class Detection:
    language: str
    """python, typescript, go, csharp, rust, java, kotlin, ruby or php."""
    registry: str
    package: str
    version: str | None
    """The version in use: the pinned one, else the range's lower bound; None when the manifest names none."""
    manifest: str
    """The file it was read from (repository-relative)."""
    specifier: str | None = None
    """The range as the manifest writes it (`>=2`, `^1.20`) when it names a range, not one version; the baseline
    is then resolved to a published version (watcher.repos.baseline)."""

    @property
    def server_language(self) -> Literal["python", "typescript", "other"]:
        """What `servers[].language` takes: the watcher builds Python and TypeScript, others declare `prepare`."""
        return self.language if self.language in ("python", "typescript") else "other"  # type: ignore[return-value]

    def as_dict(self) -> DetectionEntry:
        return {
            "language": self.language,
            "registry": self.registry,
            "package": self.package,
            "version": self.version,
            "manifest": self.manifest,
            "specifier": self.specifier,
        }


class ManifestError(ValueError):
    """A manifest that its own parser refuses (named with the parser's reason)."""


Read = Callable[[str], str | None]
_NPM = ("@modelcontextprotocol/sdk", "@modelcontextprotocol/server", "@modelcontextprotocol/client",
        "@modelcontextprotocol/core", "@modelcontextprotocol/node", "@modelcontextprotocol/express")  # fmt: skip
_GO = "github.com/modelcontextprotocol/go-sdk"
_NUGET = ("ModelContextProtocol", "ModelContextProtocol.AspNetCore", "ModelContextProtocol.Core")
_MAVEN = {"io.modelcontextprotocol.sdk:mcp": "java", "io.modelcontextprotocol:kotlin-sdk": "kotlin"}


def detect(files: list[str], read: Read, folder: str = "") -> Detection | None:
    """The first manifest directly in `folder` (of the repository's `files`) that names an MCP SDK."""
    prefix = f"{folder.strip('/')}/" if folder.strip("/") else ""
    here = sorted(f[len(prefix) :] for f in files if f.startswith(prefix) and "/" not in f[len(prefix) :])
    for pattern, parse in _MANIFESTS:
        for name in (n for n in here if fnmatch(n, pattern)):
            text = read(prefix + name)
            if text is None:
                continue
            try:
                found = parse(text, prefix + name)
            except UntrustedInputError as exc:  # its text starts with the file's name
                problem = str(exc).removeprefix(f"{prefix}{name}: ")
                raise ManifestError(f"{prefix}{name}: cannot be parsed: {problem}") from exc
            except ValueError as exc:
                raise ManifestError(f"{prefix}{name}: cannot be parsed: {exc}") from exc
            if found:
                language, registry, package, version, specifier = found
                return Detection(language, registry, package, version, prefix + name, specifier)
    return None


Found = tuple[str, str, str, str | None, str | None] | None
"""(language, registry, package, version in use or the range's floor, the range when it is one)."""


def _pep508(requirements: Iterator[str]) -> Found:
    for line in requirements:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue  # options (-r, -e, --index-url) and URLs are not requirements of a name
        if canonicalize_name(req.name) == "mcp":
            pins = [s for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
            ranged = str(req.specifier) if req.specifier and not (pins and len(req.specifier) == 1) else None
            return "python", "pypi", "mcp", _floor(req.specifier), ranged
    return None


def _floor(spec: SpecifierSet) -> str | None:
    by_op = {s.operator: s.version for s in spec}
    for op in ("==", "===", ">=", "~=", ">"):
        if op in by_op and "*" not in by_op[op]:
            return by_op[op]
    return None


def _pyproject(text: str, name: str) -> Found:
    data = untrusted.toml_document(text, name, limits=untrusted.MANIFEST)
    project = data.get("project") or {}
    listed = list(project.get("dependencies") or [])
    for extra in (project.get("optional-dependencies") or {}).values():
        listed.extend(extra)
    for group in (data.get("dependency-groups") or {}).values():
        listed.extend(item for item in group if isinstance(item, str))
    found = _pep508(iter(listed))
    if found:
        return found
    poetry = ((data.get("tool") or {}).get("poetry") or {}).get("dependencies") or {}
    if "mcp" in poetry:
        value = poetry["mcp"]
        version = value.get("version") if isinstance(value, dict) else value
        return "python", "pypi", "mcp", *_ranged(str(version) if version else None, caret_default=True)
    return None


def _requirements(text: str, name: str) -> Found:
    lines = (line.split(" #", 1)[0].strip() for line in text.splitlines())
    return _pep508(line for line in lines if line and not line.startswith(("#", "-")))


def _npm_floor(spec: str) -> str | None:
    """The lowest version a single npm/Cargo/Composer comparator allows (^1.2.3, ~1.2, >=1.0.0, 1.2.3)."""
    spec = spec.strip()
    if not spec or any(sep in spec for sep in ("||", " - ", ",", " ")):
        return None
    version = spec.lstrip("^~=>v")
    return version if version and version[0].isdigit() and "*" not in version and "x" not in version else None


def _ranged(spec: str | None, caret_default: bool = False) -> tuple[str | None, str | None]:
    """(the floor, the range) of an npm / Cargo / Composer / Poetry requirement; the range is None for one exact
    version. ``caret_default``: a bare version is a caret range there (Cargo, Poetry)."""
    if not spec:
        return None, None
    spec = spec.strip()
    exact = spec.lstrip("=v").strip()
    if exact and exact[0].isdigit() and not any(c in exact for c in "^~<>*xX |,") and not caret_default:
        return _npm_floor(spec), None
    if caret_default and spec[:1].isdigit() and not any(c in spec for c in "<>*|, "):
        return _npm_floor(spec), f"^{spec}"
    return _npm_floor(spec), spec


def _package_json(text: str, name: str) -> Found:
    data = untrusted.json_document(text, name, limits=untrusted.MANIFEST, expect=dict)
    deps: dict[str, object] = {}  # the manifest's dependency tables: name → its range (read as text)
    for section in ("devDependencies", "peerDependencies", "dependencies"):
        deps.update(data.get(section) or {})
    for package in _NPM:
        if package in deps:
            return "typescript", "npm", package, *_ranged(str(deps[package]))
    return None


def _go_mod(text: str, name: str) -> Found:
    block = False
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if block and line == ")":
            block = False
            continue
        if line.startswith("require"):
            rest = line[len("require") :].strip()
            if rest == "(":
                block = True
                continue
            line = rest
        elif not block:
            continue
        parts = line.split()
        if len(parts) >= 2 and parts[0] == _GO:
            return "go", "goproxy", _GO, parts[1], None
    return None


def _csproj(text: str, name: str) -> Found:
    root = untrusted.xml_document(text, name, limits=untrusted.MANIFEST)
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] != "PackageReference":
            continue
        package = element.get("Include") or element.get("Update")
        if package in _NUGET:
            version = element.get("Version") or next(
                (c.text for c in element if c.tag.rsplit("}", 1)[-1] == "Version"), None
            )
            return "csharp", "nuget", package, _npm_floor(version.strip("[]() ")) if version else None, None
    return None


def _cargo(text: str, name: str) -> Found:
    data = untrusted.toml_document(text, name, limits=untrusted.MANIFEST)
    for section in ("dependencies", "dev-dependencies"):
        value = (data.get(section) or {}).get("rmcp")
        if value is not None:
            version = value.get("version") if isinstance(value, dict) else value
            return "rust", "crates", "rmcp", *_ranged(str(version) if version else None, caret_default=True)
    return None


def _pom(text: str, name: str) -> Found:
    root = untrusted.xml_document(text, name, limits=untrusted.MANIFEST)

    def local(tag: str) -> str:
        return tag.rsplit("}", 1)[-1]

    props = {local(p.tag): (p.text or "").strip() for e in root if local(e.tag) == "properties" for p in e}
    for dep in root.iter():
        if local(dep.tag) != "dependency":
            continue
        fields = {local(c.tag): (c.text or "").strip() for c in dep}
        language = _MAVEN.get(f"{fields.get('groupId')}:{fields.get('artifactId')}")
        if language:
            version = fields.get("version")
            if version and version.startswith("${") and version.endswith("}"):
                version = props.get(version[2:-1])
            return language, "maven", f"{fields['groupId']}:{fields['artifactId']}", version or None, None
    return None


_QUOTED = re.compile(r"""["']([^"'\s]+)["']""")


def _gradle(text: str, name: str) -> Found:
    # Groovy and Kotlin build scripts have no Python parser: a dependency is a "group:artifact:version"
    # string literal, so look only at string literals.
    for literal in _QUOTED.findall(text):
        parts = literal.split(":")
        if len(parts) >= 2 and ":".join(parts[:2]) in _MAVEN:
            artifact = ":".join(parts[:2])
            return _MAVEN[artifact], "maven", artifact, parts[2] if len(parts) > 2 else None, None
    return None


def _gemfile(text: str, name: str) -> Found:
    for raw in text.splitlines():
        try:
            words = shlex.split(raw.replace(",", " "), comments=True)
        except ValueError:
            continue
        if len(words) >= 2 and words[0] == "gem" and words[1] == "mcp":
            bounds = (w.lstrip("~>= ") for w in words[2:])
            version = next((b for b in bounds if b[:1].isdigit()), None)
            ranged = " ".join(words[2:]) if any(w[:1] in "~><" for w in words[2:]) else None
            return "ruby", "rubygems", "mcp", version, ranged
    return None


def _composer(text: str, name: str) -> Found:
    data = untrusted.json_document(text, name, limits=untrusted.MANIFEST, expect=dict)
    for section in ("require", "require-dev"):
        value = (data.get(section) or {}).get("mcp/sdk")
        if value is not None:
            return "php", "packagist", "mcp/sdk", *_ranged(str(value))
    return None


_MANIFESTS: list[tuple[str, Callable[[str, str], Found]]] = [
    ("pyproject.toml", _pyproject),
    ("requirements*.txt", _requirements),
    ("package.json", _package_json),
    ("go.mod", _go_mod),
    ("*.csproj", _csproj),
    ("Cargo.toml", _cargo),
    ("pom.xml", _pom),
    ("build.gradle*", _gradle),
    ("Gemfile", _gemfile),
    ("composer.json", _composer),
]
MANIFEST_PATTERNS = tuple(pattern for pattern, _ in _MANIFESTS)
"""The manifest file names detection reads, in its order."""
