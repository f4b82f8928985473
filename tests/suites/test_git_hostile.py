"""git treated as hostile ground: option-shaped refs and URLs refused (config error naming the key, and again at
fetch time), an allow-list of protocols, a lock left by a fetch killed with SIGKILL removed before the next run,
and a broken cache rebuilt. Real repositories, the real `git` CLI, the loopback smart-HTTP host."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest
import yaml

from tests.fakes.git_http_server import FakeGitHost
from tests.suites.helpers import bare_clone, head, new_repo
from watcher.config import parse_config
from watcher.core.errors import ConfigError
from watcher.suites.settings import GitSource
from watcher.suites.source.checkout import cache_dir, checkout, remove_stale_locks

BASE = {
    "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
    "teams": [{"name": "books", "slack_channel": "#b"}],
}


def _server(source: dict) -> dict:
    return {
        "name": "books-git",
        "team": "books",
        "sdk": "python",
        "language": "python",
        "source": source,
        "start": ["python", "-m", "app"],
        "baseline_sdk_version": "2.3.0",
    }


def _parse(source: dict, **suites: object) -> None:
    parse_config(yaml.safe_dump({**BASE, "servers": [_server(source)], "suites": suites}))


@pytest.mark.parametrize(
    ("source", "key"),
    [
        ({"git": "https://github.com/acme/books.git", "ref": "--upload-pack=touch /tmp/pwned-ref"}, "source.ref"),
        ({"git": "--upload-pack=touch /tmp/pwned-url"}, "source.git"),
    ],
)
def test_an_option_shaped_ref_or_url_is_a_config_error_naming_the_key(source: dict, key: str):
    with pytest.raises(ConfigError, match=r"must not start with '-'") as caught:
        _parse(source)
    assert key in str(caught.value)


@pytest.mark.parametrize(
    ("url", "allowed", "expected"),
    [
        ("ext::sh", None, "not a protocol git is allowed to use"),
        ("ext::sh -c touch% /tmp/pwned-ext", None, "must not hold spaces"),
        ("fd::17", None, "not a protocol git is allowed to use"),
        ("file:///srv/books.git", None, "protocol file is not in suites.git_protocols"),
        ("/srv/books", None, "protocol file (a local path is file) is not in suites.git_protocols"),
        ("http://git.example.invalid/books.git", None, "protocol http is not in suites.git_protocols"),
        ("git://git.example.invalid/books.git", ["https", "ssh", "http", "file"], "protocol git is not in"),
    ],
)
def test_only_allowed_protocols_are_accepted(url: str, allowed: list[str] | None, expected: str):
    suites = {"git_protocols": allowed} if allowed else {}
    with pytest.raises(ConfigError, match="source.git") as caught:
        _parse({"git": url}, **suites)
    assert expected in str(caught.value)


def test_allowed_protocols_pass():
    _parse({"git": "https://github.com/acme/books.git"})
    _parse({"git": "git@github.com:acme/books.git"})
    _parse({"git": "ssh://git@github.com/acme/books.git"})
    _parse({"git": "file:///srv/books.git"}, git_protocols=["https", "file"])


def test_checkout_itself_refuses_option_shaped_values_and_protocols_not_allowed(tmp_path: Path):
    repo = new_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    marker = tmp_path / "pwned"
    cases = [
        (f"file://{repo}", f"--upload-pack=touch {marker}", ("file",), "source.ref"),
        (f"--upload-pack=touch {marker}", "main", ("file",), "source.git"),
        (f"file://{repo}", "main", ("https", "ssh"), "protocol file is not in suites.git_protocols"),
    ]
    for url, ref, protocols, expected in cases:
        source = GitSource.model_construct(git=url, ref=ref, subdir="")  # past the config's own check
        result = checkout(
            url,
            source,
            cache_root=tmp_path / "cache",
            dest=tmp_path / "runs" / "r" / "source",
            token=None,
            timeout=30,
            secret_names=set(),
            protocols=protocols,
        )
        assert not result.ok and expected in (result.error or ""), result.error
    assert not marker.exists()
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def _git_fetch_pids(cache: Path) -> list[int]:
    """The pids of git processes working in `cache` (found by their command line)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(cache).encode() in argv and b"fetch" in argv:
            found.append(int(pid))
    return found


def test_a_fetch_killed_half_way_leaves_a_lock_and_the_next_run_succeeds(tmp_path: Path):
    work = new_repo(tmp_path / "work", {"app.py": "x = 1\n", "data.bin": os.urandom(256 * 1024).hex()})
    hosted = tmp_path / "hosted"
    hosted.mkdir()
    bare_clone(work, hosted / "books.git")
    cache_root = tmp_path / "cache"
    with FakeGitHost(root=hosted) as host:
        url = host.repo_url("books.git")
        cache = cache_dir(cache_root, url)
        source = GitSource(git=url, ref="main")

        def run(name: str):
            return checkout(
                url,
                source,
                cache_root=cache_root,
                dest=tmp_path / "runs" / name / "source",
                token=None,
                timeout=60,
                secret_names=set(),
                protocols=("http",),
            )

        host.stall = threading.Event()
        outcome: list = []
        first = threading.Thread(target=lambda: outcome.append(run("r1")))
        first.start()
        deadline = time.monotonic() + 60
        while not (cache / "shallow.lock").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (cache / "shallow.lock").exists(), "the fetch never got half-way"
        pids = _git_fetch_pids(cache)
        assert pids
        for pid in pids:  # SIGKILL: git gets no chance to clean up after itself
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        host.stall.set()
        first.join(timeout=60)
        host.stall = None
        assert outcome and not outcome[0].ok
        assert (cache / "shallow.lock").exists()  # what a dead fetch leaves behind

        second = run("r2")
        assert second.ok, second.error
        assert second.commit == head(work)
        assert not (cache / "shallow.lock").exists()


def test_a_lock_a_live_process_holds_is_left_alone(tmp_path: Path):
    cache = tmp_path / "books.git"
    (cache / "refs").mkdir(parents=True)
    held, stale = cache / "index.lock", cache / "refs" / "main.lock"
    held.write_text("")
    stale.write_text("")
    with open(held):  # this very process has it open: a live owner
        assert remove_stale_locks(cache) == [stale]
    assert held.exists() and not stale.exists()


def test_a_broken_cache_is_fetched_afresh(tmp_path: Path):
    repo = new_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    url = f"file://{repo}"

    def run(name: str):
        return checkout(
            url,
            GitSource(git=url, ref="main"),
            cache_root=tmp_path / "cache",
            dest=tmp_path / "runs" / name / "source",
            token=None,
            timeout=60,
            secret_names=set(),
            protocols=("file",),
        )

    assert run("r1").ok
    cache = cache_dir(tmp_path / "cache", url)
    (cache / "config").write_text("[core\nthis is not a git config\n")  # wedged: every git command fails
    again = run("r2")
    assert again.ok, again.error
    assert again.commit == head(repo)
