"""Sources from git: real repositories made with `git`, fetched by the real CLI (file://, paths, smart HTTP)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.fakes.git_http_server import FakeGitHost
from tests.suites.helpers import bare_clone, commit_all, git, head, new_repo, write_config
from watcher.config import WatcherConfig, parse_config
from watcher.core.errors import ConfigError
from watcher.suites.notices import render
from watcher.suites.runner import run_check
from watcher.suites.settings import GitSource
from watcher.suites.source.checkout import cache_dir, checkout, display_url

TOKEN = "gho_" + "f" * 36
LOCAL = ("file", "http")
"""These tests fetch from local repositories and a loopback host: protocols a deployment allows only by config."""


def fetch(url: str, tmp: Path, run: str, *, ref: str = "main", subdir: str = "", token: str | None = None):
    return checkout(
        url,
        GitSource(git=url, ref=ref, subdir=subdir),
        cache_root=tmp / "cache",
        dest=tmp / "runs" / run / "source",
        token=token,
        timeout=60,
        secret_names=set(),
        protocols=LOCAL,
    )


def test_file_url_checks_out_the_exact_commit_and_a_new_commit_is_fetched_incrementally(tmp_path: Path):
    repo = new_repo(tmp_path / "repo", {"server/app.py": "print('v1')\n", "README.md": "hi\n"})
    first = fetch(f"file://{repo}", tmp_path, "r1", subdir="server")
    assert first.ok, first.error
    assert first.commit == head(repo)
    assert (Path(first.project) / "app.py").read_text() == "print('v1')\n"
    assert not (Path(first.root) / ".git").exists()  # an exported tree, not a clone

    (repo / "server" / "app.py").write_text("print('v2')\n")
    commit_all(repo, "v2")
    second = fetch(f"file://{repo}", tmp_path, "r2", subdir="server")
    assert second.ok and second.commit == head(repo) != first.commit
    assert (Path(second.project) / "app.py").read_text() == "print('v2')\n"
    # The first run's tree is untouched; one cache repository serves both, and it stays shallow.
    assert (Path(first.project) / "app.py").read_text() == "print('v1')\n"
    [cache] = [p for p in (tmp_path / "cache").iterdir() if p.suffix == ".git"]
    assert cache == cache_dir(tmp_path / "cache", f"file://{repo}")
    assert (cache / "shallow").exists()


def test_a_local_path_and_a_tag_work_the_same_way(tmp_path: Path):
    repo = new_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    git(repo, "tag", "v1.0")
    tagged = head(repo)
    (repo / "app.py").write_text("x = 2\n")
    commit_all(repo, "later")
    result = fetch(str(repo), tmp_path, "r1", ref="v1.0")
    assert result.ok, result.error
    assert result.commit == tagged
    assert (Path(result.project) / "app.py").read_text() == "x = 1\n"


@pytest.mark.parametrize(
    ("ref", "subdir", "url_of", "expected"),
    [
        ("no-such-branch", "", lambda repo: f"file://{repo}", "couldn't find remote ref"),
        ("main", "missing", lambda repo: f"file://{repo}", "has no folder 'missing'"),
        ("main", "", lambda repo: f"file://{repo}-gone", "git fetch of file://"),
    ],
)
def test_what_cannot_be_fetched_is_a_failed_checkout_with_the_reason(tmp_path: Path, ref, subdir, url_of, expected):
    repo = new_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    result = fetch(url_of(repo), tmp_path, "r1", ref=ref, subdir=subdir)
    assert not result.ok
    assert expected in (result.error or "")


def test_the_token_reaches_git_over_http_only_through_its_environment(tmp_path: Path):
    repo = new_repo(tmp_path / "work", {"app.py": "x = 1\n"})
    hosted = tmp_path / "hosted"
    hosted.mkdir()
    bare_clone(repo, hosted / "books.git")
    with FakeGitHost(root=hosted, token=TOKEN) as host:
        refused = fetch(host.repo_url("books.git"), tmp_path, "r0", token=None)
        assert not refused.ok and "git fetch of" in (refused.error or "")
        wrong = fetch(host.repo_url("books.git"), tmp_path, "r1", token="gho_wrong")
        assert not wrong.ok
        good = fetch(host.repo_url("books.git"), tmp_path, "r2", token=TOKEN)
        assert good.ok, good.error
        assert good.commit == head(repo)
        assert any(authorized for _, _, authorized in host.requests)
    # Never in a log, a report or the cache's own configuration.
    for path in [*(tmp_path / "runs").rglob("*"), *(tmp_path / "cache").rglob("config")]:
        if path.is_file():
            assert TOKEN not in path.read_text(errors="replace"), path
    assert TOKEN not in json.dumps([refused.as_dict(), wrong.as_dict(), good.as_dict()])


def test_credentials_in_a_url_are_not_shown():
    assert display_url("https://user:pw@git.example.invalid/a/b.git") == "https://git.example.invalid/a/b.git"
    assert display_url("file:///srv/repo") == "file:///srv/repo"


def source_server(repo: str, **overrides) -> dict:
    server = {
        "name": "books-git",
        "team": "books",
        "sdk": "python",
        "language": "python",
        "source": {"git": repo, "ref": "main", "subdir": "server"},
        "transport": "http",
        "start": ["python", "-m", "library_server", "--port", "{port}"],
        "baseline_sdk_version": "2.3.0",
        "requirements": [],
        "timeouts": {"install": 300, "start": 60, "suite": 300, "snapshot": 60},
    }
    return {**server, **overrides}


def test_a_repository_that_cannot_be_fetched_is_an_error_result_never_the_last_good_checkout(tmp_path: Path):
    repo = new_repo(tmp_path / "repo", {"server/app.py": "x = 1\n"})
    loaded = write_config(
        tmp_path,
        [source_server(f"file://{repo}", source={"git": f"file://{repo}", "ref": "nope"})],
        tmp_path / "envs",
        git_protocols=list(LOCAL),
    )
    report = run_check(loaded, "books-git", "2.3.0")
    assert report["verdict"] == "error"
    assert report["source"]["ok"] is False
    assert "couldn't find remote ref nope" in report["reasons"][0]["reason"]
    assert report["install"] is None  # nothing was built from an older tree
    text, _ = render(report)
    assert "couldn't find remote ref nope" in text


def test_an_unset_token_variable_is_an_error_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("BOOKS_GIT_TOKEN", raising=False)
    repo = new_repo(tmp_path / "repo", {"server/app.py": "x = 1\n"})
    loaded = write_config(
        tmp_path,
        [source_server(f"file://{repo}", token_env="BOOKS_GIT_TOKEN")],
        tmp_path / "envs",
        git_protocols=list(LOCAL),
    )
    report = run_check(loaded, "books-git", "2.3.0")
    assert report["verdict"] == "error"
    assert "BOOKS_GIT_TOKEN is not set" in report["reasons"][0]["reason"]


def test_config_takes_exactly_one_of_path_and_source_and_keeps_git_tokens_from_servers(tmp_path: Path):
    base = {
        "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
        "teams": [{"name": "books", "slack_channel": "#b"}],
    }

    def parse(server: dict) -> WatcherConfig:
        return parse_config(yaml.safe_dump({**base, "servers": [server]}))

    both = source_server("file:///r", path="examples/library")
    with pytest.raises(ConfigError, match="exactly one of path"):
        parse(both)
    with pytest.raises(ConfigError, match="token_env"):
        parse({**source_server("x"), "source": None, "path": "p", "token_env": "T"})
    with pytest.raises(ConfigError, match="never reaches a server"):
        parse({**source_server("x", token_env="BOOKS_GIT_TOKEN"), "env_from": ["BOOKS_GIT_TOKEN"]})
    with pytest.raises(ConfigError, match="subdir"):
        parse(source_server("x", source={"git": "x", "subdir": "../up"}))
