"""Registry adapters: one module per registry, each with ``REGISTRY`` (a RegistryInfo: the name a
config's ``registry:`` uses, the version scheme, the project-page link), ``fetch`` (the Adapter) and
``default_base()``.

    from watcher.sources import ADAPTERS, REGISTRIES, base_url
    releases = await ADAPTERS[source.registry](http, source)
    page = REGISTRIES[source.registry].page(source.package, "2.0.0")

What a source's ``url:`` (the registry root) means, and what each adapter appends to it:

=========  ==========================================  =================================================
registry   root (default)                              requests
=========  ==========================================  =================================================
pypi       a PEP 691 Simple index (pip's index-url)    ``<root>/<normalized name>/`` (JSON)
npm        the registry (``npm config get registry``)  ``<root>/<@scope%2fname>``
nuget      ``https://api.nuget.org/v3``                ``<root>/registration5-gz-semver2/<id>/index.json``
goproxy    ``https://proxy.golang.org``                ``<root>/<module>/@v/list``, ``.info``, one ``.mod``
crates     ``https://crates.io``                       ``<root>/api/v1/crates/<name>``
maven      ``https://repo1.maven.org/maven2``          ``<root>/<group/path>/<artifact>/maven-metadata.xml``
rubygems   ``https://rubygems.org``                    ``<root>/api/v1/versions/<gem>.json``
packagist  ``https://repo.packagist.org``              ``<root>/p2/<vendor>/<package>.json``
github     ``https://api.github.com``                  ``<root>/repos/<owner>/<repo>/releases?per_page=100``
=========  ==========================================  =================================================

Adding a registry: write ``watcher/sources/<name>.py`` with ``REGISTRY = RegistryInfo(...)``, a
typed model of the registry's response, ``default_base()`` and ``async def fetch(http, source) ->
list[Release]``; say what its ``url:`` is (and refuse its clearly wrong forms) in ``watcher/sources/urls.py``;
add a version scheme to ``watcher/core/schemes.py`` if none fits; list the module below
and its name in ``watcher.sources.settings.Registry``; add recorded or documented-format
fixtures under ``tests/fixtures/registries/<name>/`` and a test against the fake registry server.
"""

from __future__ import annotations

from collections.abc import Callable

from watcher.sources import crates, github, goproxy, maven, npm, nuget, packagist, pypi, rubygems
from watcher.sources._parse import root
from watcher.sources.base import Adapter, RegistryInfo, Release, SourceError
from watcher.sources.settings import SdkSource

_MODULES = {
    module.REGISTRY.name: module for module in (pypi, npm, nuget, goproxy, crates, maven, rubygems, packagist, github)
}

REGISTRIES: dict[str, RegistryInfo] = {name: module.REGISTRY for name, module in _MODULES.items()}
ADAPTERS: dict[str, Adapter] = {name: module.fetch for name, module in _MODULES.items()}
DEFAULT_BASES: dict[str, Callable[[], str]] = {name: module.default_base for name, module in _MODULES.items()}


def release_page(registry: str, package: str, version: str) -> str | None:
    """The public page of one version, where the registry has one this project may link."""
    info = REGISTRIES.get(registry)
    return info.page(package, version) if info else None


def base_url(source: SdkSource) -> str:
    """Where ``source`` is read from: its ``url:`` override, else the registry's default (no trailing slash)."""
    try:
        default = DEFAULT_BASES[source.registry]
    except KeyError:
        raise SourceError(f"{source.name}: no adapter for registry {source.registry!r}") from None
    return root(source, default)


__all__ = [
    "ADAPTERS",
    "DEFAULT_BASES",
    "REGISTRIES",
    "RegistryInfo",
    "Release",
    "SourceError",
    "base_url",
    "release_page",
]
