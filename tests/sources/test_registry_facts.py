"""Each registry's facts (config name, version scheme, project page) are declared once, in its adapter."""

from __future__ import annotations

import importlib
import pkgutil
import typing

import pytest

import watcher.sources
from watcher.core import schemes
from watcher.sources import ADAPTERS, DEFAULT_BASES, REGISTRIES, RegistryInfo, release_page, versions
from watcher.sources.settings import Registry

ADAPTER_MODULES = sorted(
    name
    for _, name, _ in pkgutil.iter_modules(watcher.sources.__path__)
    if name not in ("base", "events", "notices", "urls", "settings", "versions")
    and not name.startswith("_")  # no adapter
)


def test_every_adapter_module_declares_its_registry_and_every_table_is_built_from_them() -> None:
    declared = {}
    for name in ADAPTER_MODULES:
        info = importlib.import_module(f"watcher.sources.{name}").REGISTRY
        assert isinstance(info, RegistryInfo) and info.name == name, name
        declared[name] = info
    assert declared == REGISTRIES
    assert set(ADAPTERS) == set(DEFAULT_BASES) == set(declared) == set(typing.get_args(Registry))
    for name, info in declared.items():
        assert schemes.SCHEMES[info.scheme.name] is info.scheme
        assert versions.scheme_of(name) is info.scheme


@pytest.mark.parametrize("registry", sorted(REGISTRIES))
def test_project_pages_are_https_templates_or_left_out(registry: str) -> None:
    info = REGISTRIES[registry]
    package = "io.example:mcp" if registry == "maven" else "example/mcp"
    page = release_page(registry, package, "2.0.0-beta.1")
    if registry in ("pypi", "npm"):
        # Their hosts come from each ecosystem's configuration and are never written into the project.
        assert info.project_page is None and page is None
        return
    assert page is not None and page.startswith("https://") and page.endswith("2.0.0-beta.1")
    assert ("mcp" in page) and "{" not in page


def test_an_unknown_registry_has_no_page_and_no_scheme() -> None:
    assert release_page("cargo", "rmcp", "1.0.0") is None
    with pytest.raises(ValueError, match="unknown registry 'cargo'"):
        versions.scheme_of("cargo")
