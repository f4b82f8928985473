"""Class 12: a ``url:`` of the wrong form for its registry is a configuration error naming the file, the line,
the key and the form expected, not a poll that fails later with a 404 or a page of the wrong format."""

from __future__ import annotations

import typing

import pytest

from tests.sources.helpers import ROOTS
from watcher.cli import main
from watcher.config import parse_config
from watcher.core.errors import ConfigError
from watcher.sources.settings import Registry
from watcher.sources.urls import EXPECTED

PACKAGES = {
    "pypi": "mcp",
    "npm": "@modelcontextprotocol/sdk",
    "nuget": "ModelContextProtocol",
    "goproxy": "github.com/modelcontextprotocol/go-sdk",
    "crates": "rmcp",
    "maven": "io.modelcontextprotocol.sdk:mcp",
    "rubygems": "mcp",
    "packagist": "mcp/sdk",
    "github": "modelcontextprotocol/swift-sdk",
}


def one_sdk(registry: str, url: str) -> str:
    return f"sdks:\n  - name: sdk\n    registry: {registry}\n    package: {PACKAGES[registry]!r}\n    url: {url!r}\n"


@pytest.mark.parametrize(
    ("registry", "url", "why", "expected"),
    [
        ("pypi", "https://mirror.example/pypi", "a PyPI JSON API URL", "pip's Simple index URL (index-url)"),
        ("pypi", "https://mirror.example/pypi/mcp/json", "a PyPI JSON API URL", "e.g. https://mirror.example/simple/"),
        ("pypi", "mirror.example/simple/", "no http:// or https:// scheme", "pip's Simple index URL"),
        ("npm", "ftp://npm.example/", "the scheme ftp:// is not http:// or https://", "the npm registry root"),
        ("npm", "https:///registry", "no host", "the npm registry root"),
        ("nuget", "https://nuget.example/v3/index.json", "the service index itself", "without index.json"),
        ("nuget", "https://nuget.example/api/v2/", "a NuGet v2 feed", "the NuGet v3 root"),
        ("goproxy", "https://goproxy.example,direct", "a GOPROXY list", "one Go module proxy"),
        ("crates", "https://crates.example/api/v1", "the API path that the adapter appends", "without /api/v1"),
        ("rubygems", "https://gems.example/api/v1/", "the API path that the adapter appends", "without /api/v1"),
        ("packagist", "https://packagist.example/packages.json", "a path that the adapter appends", "Composer 2"),
        ("github", "https://github.com", "GitHub's web site, not its REST API", "https://HOST/api/v3"),
        ("maven", "https://maven.example/maven2?token=1", "a query or fragment", "a Maven repository root"),
    ],
)
def test_a_url_of_the_wrong_form_names_file_line_key_and_form(registry: str, url: str, why: str, expected: str):
    with pytest.raises(ConfigError) as caught:
        parse_config(one_sdk(registry, url), "watcher.yaml")
    message = str(caught.value)
    assert message.startswith("watcher.yaml:5: sdks.0.url: "), message
    assert why in message and f"a {registry} url: is " in message and expected in message, message


@pytest.mark.parametrize(
    "url",
    [
        "https://mirror.example/simple/",
        "https://mirror.example/root/pypi/+simple/",  # devpi
        "https://host.example/api/pypi/pypi-remote/simple",  # Artifactory
        "http://127.0.0.1:8711/simple/",
    ],
)
def test_simple_index_urls_of_mirrors_are_accepted(url: str):
    assert parse_config(one_sdk("pypi", url)).sdks[0].url == url


@pytest.mark.parametrize("registry", sorted(ROOTS))
def test_the_fake_registries_roots_and_the_documented_defaults_are_accepted(registry: str):
    defaults = {
        "nuget": "https://api.nuget.org/v3",
        "goproxy": "https://proxy.golang.org",
        "crates": "https://crates.io",
        "maven": "https://repo1.maven.org/maven2",
        "rubygems": "https://rubygems.org",
        "packagist": "https://repo.packagist.org",
        "github": "https://api.github.com",
    }
    for url in (f"http://127.0.0.1:8711/{ROOTS[registry]}", defaults.get(registry)):
        if url:
            assert parse_config(one_sdk(registry, url)).sdks[0].url == url
    assert parse_config(one_sdk("github", "https://ghe.example/api/v3")).sdks[0].url


def test_poll_stops_with_exit_2_before_reading_anything(tmp_path, capsys):
    path = tmp_path / "watcher.yaml"
    path.write_text(f"state: {str(tmp_path / 'watcher.db')!r}\n" + one_sdk("pypi", "http://127.0.0.1:9/pypi"))
    assert main(["--config", str(path), "poll"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:6: sdks.0.url: " in err and "a PyPI JSON API URL" in err
    assert not (tmp_path / "watcher.db").exists()


def test_every_registry_names_the_form_it_expects():
    assert set(EXPECTED) == set(typing.get_args(Registry)) == set(PACKAGES)
