"""A conformance-suite version published on the loopback npm registry: a real tarball made with `npm pack`
from the installed pinned suite, its dependencies bundled (the loopback registry serves only this package)."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from tests.fakes.conformance_suite import pack
from watcher.core.store import Store
from watcher.core.store_schema import VersionRow
from watcher.suites.judge.conformance import ConformanceTool

PACKAGE = "@modelcontextprotocol/conformance"


def pack_suite(tool: ConformanceTool, version: str, work: Path, extra_sets: dict[str, str] | None = None) -> Path:
    """`npm pack` of a copy of the installed suite at `version`, with `extra_sets` (name → a shipped set to copy)."""
    pkg = work / f"pkg-{version}"
    shutil.rmtree(pkg, ignore_errors=True)
    shutil.copytree(tool.root, pkg, symlinks=True)
    installed = tool.root.parent.parent  # <prefix>/node_modules
    for child in installed.iterdir():
        if child.name in (".bin", ".package-lock.json") or child.name == "@modelcontextprotocol":
            continue
        shutil.copytree(child, pkg / "node_modules" / child.name, symlinks=True)
    scope = installed / "@modelcontextprotocol"
    for child in scope.iterdir():
        if child.name != "conformance":
            shutil.copytree(child, pkg / "node_modules" / "@modelcontextprotocol" / child.name, symlinks=True)
    for name, source in (extra_sets or {}).items():
        shutil.copyfile(pkg / "requirements" / f"{source}.yaml", pkg / "requirements" / f"{name}.yaml")
    manifest = json.loads((pkg / "package.json").read_text(encoding="utf-8"))
    manifest["version"] = version
    manifest.pop("scripts", None)  # prepack would rebuild from sources the package does not ship
    manifest.pop("devDependencies", None)
    manifest["bundleDependencies"] = sorted(manifest.get("dependencies", {}))
    (pkg / "package.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return pack(pkg, work, timeout=300)


def publish(root: Path, tarballs: dict[str, tuple[Path, str]], latest: str) -> None:
    """Write the packument (version → (tarball, publish time)) and the tarballs under a fake registry's root."""
    folder = root / "tarballs"
    folder.mkdir(parents=True, exist_ok=True)
    versions: dict[str, Any] = {}
    times: dict[str, str] = {}
    for version, (tarball, published) in tarballs.items():
        target = folder / tarball.name
        if tarball != target:
            shutil.copyfile(tarball, target)
        data = target.read_bytes()
        manifest = _manifest(target)
        versions[version] = {
            **manifest,
            "dist": {
                "tarball": "{{BASE}}/tarballs/" + tarball.name,
                "shasum": hashlib.sha1(data).hexdigest(),  # noqa: S324 (npm's own field)
                "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
            },
        }
        times[version] = published
    document = {"name": PACKAGE, "dist-tags": {"latest": latest}, "versions": versions, "time": times}
    path = root / "@modelcontextprotocol" / "conformance.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")


def _manifest(tarball: Path) -> dict[str, Any]:
    import tarfile

    with tarfile.open(tarball) as archive:
        member = archive.extractfile("package/package.json")
        assert member is not None
        data: dict[str, Any] = json.loads(member.read())
    return {k: v for k, v in data.items() if k not in ("readme",)}


def known_sdk(store: Store, version: str = "2.3.0") -> None:
    """The python SDK's `version` (mcp, a stable release) as the state knows it: the version readiness judges with."""
    store.add_version(
        VersionRow(
            sdk="python",
            registry="pypi",
            package="mcp",
            version=version,
            prerelease=0,
            yanked=0,
            published="2026-11-20T10:00:00Z",
            first_seen="2026-11-20T10:05:00Z",
            baseline=1,
        )
    )
