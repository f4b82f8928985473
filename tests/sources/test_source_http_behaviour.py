"""Conditional requests, failures and garbage: what a poll costs and how it fails, against the fake registry."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakes.registry_server import FIXTURES, FakeRegistry, serve_registry
from tests.sources.helpers import FIXTURE_SOURCES, by_version, fetch, run_with_http, settings, source
from watcher.sources import ADAPTERS, github
from watcher.sources.base import RegistryHttp, Release, SourceError


@pytest.fixture
def registry() -> Iterator[FakeRegistry]:
    with serve_registry() as fake:
        yield fake


@pytest.mark.parametrize(
    ("kind", "package", "folder"), FIXTURE_SOURCES, ids=[f"{k}:{p}:{f}" for k, p, f in FIXTURE_SOURCES]
)
def test_unchanged_source_costs_one_conditional_request(
    registry: FakeRegistry, kind: str, package: str, folder: str
) -> None:
    src = source(registry, kind, package, folder)

    async def twice(new_http: Callable[[], RegistryHttp]) -> tuple[list[Release], list[Release], RegistryHttp, int]:
        http = new_http()
        cold = await ADAPTERS[kind](http, src)
        cold_requests = http.stats.requests
        warm = await ADAPTERS[kind](http, src)
        return cold, warm, http, cold_requests

    server_before = registry.stats.not_modified
    cold, warm, http, cold_requests = run_with_http(twice)
    assert cold and warm == cold  # the cached body is parsed again, to the same releases
    assert http.stats.requests - cold_requests == 1
    assert registry.stats.not_modified - server_before == 1  # and that one request was answered 304
    assert http.stats.not_modified == 1


def _copy_fixture(tmp_path: Path, relative: str) -> Path:
    target = tmp_path / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / relative, target)
    return target


def test_changed_document_is_fetched_again_not_served_stale(tmp_path: Path) -> None:
    page = _copy_fixture(tmp_path, "npm/@modelcontextprotocol/server.json")
    with serve_registry(tmp_path) as fake:
        src = source(fake, "npm", "@modelcontextprotocol/server")

        async def poll_change_poll(new_http: Callable[[], RegistryHttp]) -> tuple[list[Release], list[Release]]:
            http = new_http()
            before = await ADAPTERS["npm"](http, src)
            doc = json.loads(page.read_text())
            doc["versions"]["2.5.0-beta.1"] = {"name": doc["name"], "version": "2.5.0-beta.1"}
            doc["time"]["2.5.0-beta.1"] = "2026-11-20T10:00:00.000Z"
            page.write_text(json.dumps(doc))
            after = await ADAPTERS["npm"](http, src)
            assert http.stats.not_modified == 0
            return before, after

        before, after = run_with_http(poll_change_poll)
    assert "2.5.0-beta.1" not in by_version(before)
    assert by_version(after)["2.5.0-beta.1"].prerelease


def test_server_error_is_a_source_error_after_retries(registry: FakeRegistry) -> None:
    registry.fail("/pypi/simple/mcp/", status=500)
    with pytest.raises(SourceError) as caught:
        fetch(source(registry, "pypi", "mcp"), settings(retries=2))
    message = str(caught.value)
    assert registry.url("pypi/simple/mcp/") in message
    assert "HTTP 500" in message and "after 3 attempts" in message
    assert registry.stats.by_path["/pypi/simple/mcp/"] == 3


def test_not_found_is_a_source_error(registry: FakeRegistry) -> None:
    with pytest.raises(SourceError, match="HTTP 404"):
        fetch(source(registry, "crates", "no-such-crate"))


@pytest.mark.parametrize(
    ("kind", "package", "path", "reason"),
    [
        ("pypi", "mcp", "/pypi/simple/mcp/", "not valid JSON"),
        ("npm", "@modelcontextprotocol/sdk", "/npm/@modelcontextprotocol/sdk", "not valid JSON"),
        (
            "nuget",
            "ModelContextProtocol",
            "/nuget/v3/registration5-gz-semver2/modelcontextprotocol/index.json",
            "not valid JSON",
        ),
        ("crates", "rmcp", "/crates/api/v1/crates/rmcp", "not valid JSON"),
        (
            "maven",
            "io.modelcontextprotocol.sdk:mcp",
            "/maven/io/modelcontextprotocol/sdk/mcp/maven-metadata.xml",
            "not valid XML",
        ),
        ("rubygems", "mcp", "/rubygems/api/v1/versions/mcp.json", "not valid JSON"),
        ("packagist", "mcp/sdk", "/packagist/p2/mcp/sdk.json", "not valid JSON"),
        (
            "github",
            "modelcontextprotocol/swift-sdk",
            "/github/repos/modelcontextprotocol/swift-sdk/releases",
            "not valid JSON",
        ),
        (
            "goproxy",
            "github.com/modelcontextprotocol/go-sdk",
            "/goproxy/github.com/modelcontextprotocol/go-sdk/@v/v1.5.0.info",
            "not valid JSON",
        ),
    ],
)
def test_malformed_body_is_a_source_error_with_the_reason(
    registry: FakeRegistry, kind: str, package: str, path: str, reason: str
) -> None:
    registry.fail(path, malformed=True)
    with pytest.raises(SourceError) as caught:
        fetch(source(registry, kind, package))
    message = str(caught.value)
    assert reason in message
    assert message.startswith(registry.base + "/") and path.rsplit("/", 1)[-1] in message.split(": ")[0]


def test_hanging_registry_times_out_as_a_source_error(registry: FakeRegistry) -> None:
    registry.fail("/rubygems/api/v1/versions/mcp.json", hang=True)
    with pytest.raises(SourceError, match=r"timed out after 0\.3 s \(after 2 attempts\)"):
        fetch(source(registry, "rubygems", "mcp"), settings(retries=1, timeout=0.3))
    assert registry.stats.by_path["/rubygems/api/v1/versions/mcp.json"] == 2


def test_rate_limited_then_ok_succeeds_after_retry_after(registry: FakeRegistry) -> None:
    registry.fail("/crates/api/v1/crates/rmcp", status=429, retry_after=7, times=1)
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    src = source(registry, "crates", "rmcp")

    async def body(new_http: Callable[[], RegistryHttp]) -> list[Release]:
        return await ADAPTERS["crates"](new_http(), src)

    releases = run_with_http(body, settings(retries=2, backoff=0.01), sleep=no_wait)
    assert len(releases) == 14
    assert registry.stats.by_path["/crates/api/v1/crates/rmcp"] == 2
    assert 7 in waits  # the registry's Retry-After was honoured


GARBAGE = [
    # kind, package, file under the root, body, what the error must name
    (
        "pypi",
        "mcp",
        "pypi/simple/mcp/index.json",
        {"meta": {"api-version": "1.1"}, "name": "mcp", "files": [{"filename": "mcp-1.0.0.tar.gz", "hashes": {}}]},
        "field files.0.url",
    ),
    (
        "npm",
        "left-pad",
        "npm/left-pad.json",
        {"name": "left-pad", "versions": {"1.0.0": {"version": 5}}},
        "field versions.1.0.0.version",
    ),
    (
        "npm",
        "left-pad",
        "npm/left-pad.json",
        {"name": "left-pad", "versions": {"1.0.0": {"version": "1.0.0"}}, "time": {"1.0.0": "yesterday"}},
        "field time.1.0.0",
    ),
    (
        "nuget",
        "Some.Package",
        "nuget/v3/registration5-gz-semver2/some.package/index.json",
        {"count": 1, "items": [{"@id": "p", "count": 1, "items": [{"catalogEntry": {"id": "Some.Package"}}]}]},
        "field items.0.items.0.catalogEntry.version",
    ),
    (
        "goproxy",
        "example.com/mod",
        "goproxy/example.com/mod/@v/list",
        "<html>proxy error</html>\n",
        "line 1 is not a module version",
    ),
    ("goproxy", "example.com/mod", "goproxy/example.com/mod/@v/v1.0.0.info", {"Version": "v1.0.0"}, "field Time"),
    (
        "crates",
        "rmcp",
        "crates/api/v1/crates/rmcp.json",
        {"crate": {"name": "rmcp"}, "versions": [{"num": "1.0.0", "created_at": "soon"}]},
        "field versions.0.created_at",
    ),
    (
        "maven",
        "g.roup:art",
        "maven/g/roup/art/maven-metadata.xml",
        "<html><body>login</body></html>",
        "root element <html>",
    ),
    (
        "maven",
        "g.roup:art",
        "maven/g/roup/art/maven-metadata.xml",
        "<metadata><groupId>g.roup</groupId></metadata>",
        "field metadata.versioning.versions is missing",
    ),
    ("rubygems", "mcp", "rubygems/api/v1/versions/mcp.json", {"error": "gone"}, "field (document)"),
    ("packagist", "mcp/sdk", "packagist/p2/mcp/sdk.json", {"packages": {}}, "field packages.mcp/sdk is missing"),
    ("github", "o/r", "github/repos/o/r/releases.json", [{"tag_name": 5}], "field 0.tag_name"),
]


@pytest.mark.parametrize(("kind", "package", "file", "body", "names"), GARBAGE, ids=[f"{g[0]}:{g[4]}" for g in GARBAGE])
def test_wrong_shape_is_a_source_error_naming_url_and_field(
    tmp_path: Path, kind: str, package: str, file: str, body: object, names: str
) -> None:
    target = tmp_path / file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body if isinstance(body, str) else json.dumps(body))
    if kind == "goproxy" and file.endswith(".info"):
        (target.parent / "list").write_text("v1.0.0\n")
    with serve_registry(tmp_path) as fake, pytest.raises(SourceError) as caught:
        fetch(source(fake, kind, package))
    message = str(caught.value)
    assert names in message
    assert message.startswith(fake.base + "/")  # the URL comes first


def test_bad_package_names_are_source_errors(registry: FakeRegistry) -> None:
    with pytest.raises(SourceError, match="expected groupId:artifactId"):
        fetch(source(registry, "maven", "just-an-artifact"))
    with pytest.raises(SourceError, match="expected owner/repo"):
        fetch(source(registry, "github", "swift-sdk"))
    with pytest.raises(SourceError, match="expected vendor/package"):
        fetch(source(registry, "packagist", "sdk"))


def _write_release_pages(root: Path, count: int) -> None:
    folder = root / "github/repos/o/big"
    folder.mkdir(parents=True)
    items = [
        {"tag_name": f"v1.{n}.0", "draft": False, "prerelease": n % 10 == 0, "published_at": "2026-01-01T00:00:00Z"}
        for n in range(count, 0, -1)
    ]
    for page in range(0, count, github.PER_PAGE):
        number = page // github.PER_PAGE + 1
        name = "releases__per_page_100" + (f"_page_{number}" if number > 1 else "") + ".json"
        (folder / name).write_text(json.dumps(items[page : page + github.PER_PAGE]))


def test_github_follows_full_pages_and_reuses_them_when_unchanged(tmp_path: Path) -> None:
    _write_release_pages(tmp_path, 150)
    with serve_registry(tmp_path) as fake:
        src = source(fake, "github", "o/big")

        async def twice(new_http: Callable[[], RegistryHttp]) -> tuple[list[Release], int, int]:
            http = new_http()
            releases = await ADAPTERS["github"](http, src)
            cold = http.stats.requests
            again = await ADAPTERS["github"](http, src)
            assert again == releases
            return releases, cold, http.stats.requests - cold

        releases, cold_requests, warm_requests = run_with_http(twice)
    assert len(releases) == 150 and (cold_requests, warm_requests) == (2, 1)
    assert [r.version for r in releases if r.prerelease][:2] == ["v1.10.0", "v1.20.0"]


def test_github_token_is_sent_but_never_shown(registry: FakeRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "ghp_" + "x" * 36
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    assert github.headers()["Authorization"] == f"Bearer {secret}"
    registry.fail("/github/repos/modelcontextprotocol/swift-sdk/releases", status=503)
    with pytest.raises(SourceError) as caught:
        fetch(source(registry, "github", "modelcontextprotocol/swift-sdk"))
    assert secret not in str(caught.value) and "HTTP 503" in str(caught.value)
    monkeypatch.delenv("GITHUB_TOKEN")
    assert "Authorization" not in github.headers()
