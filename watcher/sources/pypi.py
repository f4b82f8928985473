"""PyPI through the Simple JSON API (PEP 691 project page with PEP 700 ``versions`` and upload times).

One request per poll: ``GET <index>/<normalized-name>/`` with
``Accept: application/vnd.pypi.simple.v1+json``. The base is a Simple index URL (what pip calls
``index-url``), e.g. a mirror's ``…/simple/``. A release's time is its earliest file upload; a
release is yanked only when every one of its files is (PEP 592). Versions listed without files
(PEP 700 allows it) have no time. The index must speak the JSON form (PyPI and current mirrors do);
an HTML-only index answers something that is not JSON, which is reported as a failed poll rather
than read as "no versions".
"""

from __future__ import annotations

import configparser
import os
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import pypi_simple
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from pydantic import ValidationError

from watcher.core import schemes
from watcher.sources._parse import describe, get, ordered, release, root
from watcher.sources.base import RegistryHttp, RegistryInfo, Release, SourceError
from watcher.sources.settings import SdkSource

# No project page: its host is not written into this project (it comes from configuration).
REGISTRY = RegistryInfo(name="pypi", scheme=schemes.PEP440, project_page=None)


def default_base() -> str:
    """pip's configured index: PIP_INDEX_URL, else ``global.index-url`` from pip's config files, else PyPI."""
    env = os.environ.get("PIP_INDEX_URL", "").strip()
    if env:
        return env.split()[0]
    return _index_url_from_pip_config() or pypi_simple.PYPI_SIMPLE_ENDPOINT


def _pip_config_files() -> list[Path]:
    """pip's config files in its own load order (later files override earlier ones)."""
    env_file = os.environ.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        return []  # pip's documented way to load no config file at all
    home = Path.home()
    xdg_dirs = os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    files = [Path(d) / "pip" / "pip.conf" for d in xdg_dirs.split(os.pathsep) if d]
    files.append(Path("/etc/pip.conf"))
    files.append(home / ".pip" / "pip.conf")
    files.append(Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "pip" / "pip.conf")
    files.append(Path(sys.prefix) / "pip.conf")
    if env_file:
        files.append(Path(env_file))
    return files


def _index_url_from_pip_config() -> str | None:
    found: str | None = None
    for path in _pip_config_files():
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue  # pip itself refuses a broken file; we fall back to the next source
        for key in ("index-url", "index_url"):
            if parser.has_option("global", key):
                value = parser.get("global", key).strip()
                if value:
                    found = value.split()[0]
    return found


async def fetch(http: RegistryHttp, source: SdkSource) -> list[Release]:
    url = f"{root(source, default_base)}/{canonicalize_name(source.package)}/"
    fetched = await get(http, url, headers={"Accept": pypi_simple.ACCEPT_JSON_ONLY})
    data = fetched.document()
    try:
        page = pypi_simple.ProjectPage.from_json_data(data, base_url=url)
    except ValidationError as exc:
        raise SourceError(f"{url}: unexpected response: {describe(exc)}") from exc
    except (ValueError, pypi_simple.UnsupportedRepoVersionError) as exc:
        raise SourceError(f"{url}: unexpected response: {exc}") from exc
    return ordered(REGISTRY, _releases(page))


def _same_version(text: str) -> object:
    """Files and the PEP 700 list may spell a version differently (1.0 vs 1.0.0): compare parsed."""
    try:
        return Version(text)
    except InvalidVersion:
        return text


def _releases(page: pypi_simple.ProjectPage) -> list[Release]:
    files: dict[object, list[pypi_simple.DistributionPackage]] = defaultdict(list)
    spelled: dict[object, str] = {}
    for package in page.packages:
        if package.version is None:
            continue  # a file name that names no version (rare, pre-PEP 427 uploads): nothing to attach it to
        key = _same_version(package.version)
        files[key].append(package)
        spelled.setdefault(key, package.version)
    for text in page.versions or []:
        spelled[_same_version(text)] = text  # the index's own spelling wins
    releases = []
    for key, text in spelled.items():
        dists = files.get(key, [])
        times: list[datetime] = [d.upload_time for d in dists if d.upload_time is not None]
        yanked = bool(dists) and all(d.is_yanked for d in dists)
        reasons = sorted({d.yanked_reason for d in dists if d.is_yanked and d.yanked_reason})
        notes = [f"yanked: {r}" for r in reasons] if yanked else []
        if not dists:
            notes.append("listed without files")
        releases.append(release(REGISTRY, text, min(times) if times else None, yanked=yanked, notes=notes))
    return releases
