"""Registry adapters: one module per registry, each with ``fetch`` (the Adapter) and ``default_base()``.

    from watcher.sources import ADAPTERS, base_url
    releases = await ADAPTERS[source.registry](http, source)

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

Adding a registry: write ``watcher/sources/<name>.py`` with a typed model of the registry's
response, ``default_base()`` and ``async def fetch(http, source) -> list[Release]``; add its
version rules to ``watcher/versions.py``; register it below; add recorded or documented-format
fixtures under ``tests/fixtures/registries/<name>/`` and a test against the fake registry server.
"""

from __future__ import annotations

from collections.abc import Callable

from watcher.config import SdkSource
from watcher.sources import crates, github, goproxy, maven, npm, nuget, packagist, pypi, rubygems
from watcher.sources._parse import root
from watcher.sources.base import Adapter, Release, SourceError

_MODULES = {
    "pypi": pypi,
    "npm": npm,
    "nuget": nuget,
    "goproxy": goproxy,
    "crates": crates,
    "maven": maven,
    "rubygems": rubygems,
    "packagist": packagist,
    "github": github,
}

ADAPTERS: dict[str, Adapter] = {name: module.fetch for name, module in _MODULES.items()}
DEFAULT_BASES: dict[str, Callable[[], str]] = {name: module.default_base for name, module in _MODULES.items()}


def base_url(source: SdkSource) -> str:
    """Where ``source`` is read from: its ``url:`` override, else the registry's default (no trailing slash)."""
    try:
        default = DEFAULT_BASES[source.registry]
    except KeyError:
        raise SourceError(f"{source.name}: no adapter for registry {source.registry!r}") from None
    return root(source, default)


__all__ = ["ADAPTERS", "DEFAULT_BASES", "Release", "SourceError", "base_url"]
