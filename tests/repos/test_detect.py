"""SDK detection from each manifest format, parsed by its own parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.repos.helpers import central_config, change, team_repo
from watcher.core.store import Store
from watcher.ops.status import collect_status, render_status
from watcher.repos.detect import Detection, ManifestError, detect
from watcher.repos.sync import sync_repos

CSPROJ = """<Project Sdk="Microsoft.NET.Sdk">
  <ItemGroup>
    <PackageReference Include="Microsoft.Extensions.Hosting" Version="9.0.0" />
    <PackageReference Include="ModelContextProtocol.AspNetCore" Version="0.9.0-preview.1" />
  </ItemGroup>
</Project>
"""
POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <properties><mcp.version>2.0.0-M3</mcp.version></properties>
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13</version></dependency>
    <dependency>
      <groupId>io.modelcontextprotocol.sdk</groupId><artifactId>mcp</artifactId><version>${mcp.version}</version>
    </dependency>
  </dependencies>
</project>
"""
GO_MOD = """module example.com/books

go 1.23

require (
\tgithub.com/google/jsonschema-go v0.3.0 // indirect
\tgithub.com/modelcontextprotocol/go-sdk v1.6.0-pre.1
)
"""

CASES = [
    (
        "pyproject.toml",
        '[project]\nname = "x"\ndependencies = ["MCP[cli]>=1.26.0,<2"]\n',
        "python",
        "pypi",
        "mcp",
        "1.26.0",
        "<2,>=1.26.0",
    ),
    ("requirements-dev.txt", "-r base.txt\n# pinned\nmcp==2.0.0b1  # beta\n", "python", "pypi", "mcp", "2.0.0b1", None),
    (
        "package.json",
        '{"dependencies": {"zod": "^3", "@modelcontextprotocol/server": "^2.0.0-beta.1"}}',
        "typescript",
        "npm",
        "@modelcontextprotocol/server",
        "2.0.0-beta.1",
        "^2.0.0-beta.1",
    ),
    ("go.mod", GO_MOD, "go", "goproxy", "github.com/modelcontextprotocol/go-sdk", "v1.6.0-pre.1", None),
    ("Books.csproj", CSPROJ, "csharp", "nuget", "ModelContextProtocol.AspNetCore", "0.9.0-preview.1", None),
    (
        "Cargo.toml",
        '[dependencies]\nrmcp = { version = "3.0.0-beta.1", features = ["server"] }\n',
        "rust",
        "crates",
        "rmcp",
        "3.0.0-beta.1",
        "^3.0.0-beta.1",  # Cargo: a bare version is a caret range
    ),
    ("pom.xml", POM, "java", "maven", "io.modelcontextprotocol.sdk:mcp", "2.0.0-M3", None),
    (
        "build.gradle.kts",
        'dependencies {\n    implementation("io.modelcontextprotocol:kotlin-sdk:0.7.2")\n}\n',
        "kotlin",
        "maven",
        "io.modelcontextprotocol:kotlin-sdk",
        "0.7.2",
        None,
    ),
    (
        "Gemfile",
        'source "https://rubygems.org"\ngem "rack"\ngem "mcp", "~> 0.3"\n',
        "ruby",
        "rubygems",
        "mcp",
        "0.3",
        "~> 0.3",
    ),
    (
        "composer.json",
        '{"require": {"php": ">=8.1", "mcp/sdk": "^0.1.0"}}',
        "php",
        "packagist",
        "mcp/sdk",
        "0.1.0",
        "^0.1.0",
    ),
]


@pytest.mark.parametrize(("manifest", "text", "language", "registry", "package", "version", "specifier"), CASES)
def test_each_manifest_names_its_sdk_and_version(
    manifest: str, text: str, language: str, registry: str, package: str, version: str, specifier: str | None
):
    files = {f"srv/{manifest}": text, "srv/README.md": "hello", "other/package.json": "{}"}
    found = detect(list(files), files.get, "srv")
    # The version in use (a range's floor), and the range itself when the manifest names one.
    assert found == Detection(language, registry, package, version, f"srv/{manifest}", specifier)


def test_no_mcp_dependency_is_no_detection_and_a_broken_manifest_is_named():
    files = {"package.json": '{"dependencies": {"express": "^4"}}', "pyproject.toml": "[project\n"}
    with pytest.raises(ManifestError, match=r"pyproject.toml: cannot be parsed"):
        detect(list(files), files.get)
    assert detect(["package.json"], files.get) is None
    assert detect(["package.json"], {"package.json": '{"dependencies": {"mcp": "1"}}'}.get) is None


def test_detection_shows_in_status_and_the_file_overrides_it(tmp_path: Path):
    repo = team_repo(tmp_path / "repo", "books", version="1.26.0")
    loaded = central_config(tmp_path, [{"git": str(repo), "team": "books"}])
    store = Store(tmp_path / "state" / "watcher.db")
    sync_repos(loaded, store)
    text = render_status(collect_status(loaded, store))
    assert "TEAM REPOSITORIES" in text
    assert "books: python, sdk python (mcp 1.26.0); detected python mcp 1.26.0 in server/pyproject.toml" in text
    assert "books" in collect_status(loaded, store)["runs"]["last"]  # the repository's server is in the config

    override = (repo / ".mcp-watcher.yaml").read_text() + "    baseline_sdk_version: 1.25.0\n"
    change(repo, {".mcp-watcher.yaml": override})
    result = sync_repos(loaded, store)
    assert result.config.server("books").baseline_sdk_version == "1.25.0"
    shown = collect_status(loaded, store)["repos"][0]["servers"][0]
    assert shown["overridden"] == ["baseline_sdk_version"]
    assert shown["detected"]["version"] == "1.26.0"
