"""The tree of a team's repository unpacked by our own member checks (watcher/suites/source/extract.py).

Each rule of `extract.RULES` has its case: a tar with that one bad member is refused, naming the member,
and nothing of the tree is written (above all nothing outside it). The module runs on the oldest Python the
package claims: /usr/bin/python3 here is Debian 12's 3.11.2, whose tarfile has no `filter=`; the test runs
it there with `-I -S` (no site-packages: the standard library only). And a real repository with a link out
of it is a checkout error naming the path, not `internal error: AbsoluteLinkError`.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.suites.helpers import commit_all, git, new_repo
from watcher.suites.settings import GitSource
from watcher.suites.source import extract
from watcher.suites.source.checkout import checkout
from watcher.suites.source.extract import RULES, UnsafeMember, extract_tree

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = Path("/usr/bin/python3")


def _member(name: str, kind: bytes = tarfile.REGTYPE, *, data: bytes = b"", link: str = "", mode: int = 0o644):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = mode
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    info.mtime = 1_700_000_000
    return info, (io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def write_tar(path: Path, members: list[tuple[tarfile.TarInfo, io.BytesIO | None]]) -> Path:
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, data)
    return path


def good_tree() -> list[tuple[tarfile.TarInfo, io.BytesIO | None]]:
    return [
        _member("app/", tarfile.DIRTYPE, mode=0o755),
        _member("app/server.py", data=b"print('hi')\n", mode=0o755),
        _member("app/lib/", tarfile.DIRTYPE, mode=0o755),
        _member("app/lib/util.py", data=b"x = 1\n", mode=0o4777),
        _member("app/current", tarfile.SYMTYPE, link="lib"),
        _member("docs", tarfile.SYMTYPE, link="app/lib/../.."),
        _member("app/same.py", tarfile.LNKTYPE, link="app/server.py"),
        _member("README.md", data=b"hello\n"),
    ]


HOSTILE = {
    "absolute-path": lambda: [_member("/tmp/planted-by-the-tree", data=b"x")],
    "parent-path": lambda: [_member("app/../../planted", data=b"x")],
    "special-file": lambda: [_member("fifo", tarfile.FIFOTYPE)],
    "absolute-link": lambda: [_member("token", tarfile.SYMTYPE, link="/etc/mcp-watcher/slack-token")],
    "escaping-link": lambda: [_member("up", tarfile.SYMTYPE, link="../../state")],
    "link-loop": lambda: [_member("a", tarfile.SYMTYPE, link="b"), _member("b", tarfile.SYMTYPE, link="a/x")],
    "hard-link": lambda: [_member("passwd", tarfile.LNKTYPE, link="/etc/passwd")],
    "through-link": lambda: [_member("lib", tarfile.SYMTYPE, link="."), _member("lib/x.py", data=b"x")],
    "repeated-path": lambda: [_member("twice", data=b"x"), _member("twice", tarfile.SYMTYPE, link=".")],
}
"""One tar per rule; the first member named is the one refused."""
REFUSED = {
    "absolute-path": "/tmp/planted-by-the-tree",
    "parent-path": "app/../../planted",
    "special-file": "fifo",
    "absolute-link": "token",
    "escaping-link": "up",
    "link-loop": "a",
    "hard-link": "passwd",
    "through-link": "lib/x.py",
    "repeated-path": "twice",
}


def test_every_rule_has_its_hostile_tree() -> None:
    assert set(HOSTILE) == set(RULES) == set(REFUSED)
    assert all(rule.doc for rule in RULES.values())


@pytest.mark.parametrize("rule", sorted(HOSTILE))
def test_a_tree_with_a_member_a_rule_refuses_is_refused_whole_naming_the_member(tmp_path: Path, rule: str) -> None:
    archive = write_tar(tmp_path / "tree.tar", [*good_tree(), *HOSTILE[rule]()])
    with tarfile.open(archive) as tar:  # the hostile member is really in the archive the extraction reads
        assert REFUSED[rule] in [extract.member_path(m) if not m.name.startswith("/") else m.name for m in tar]
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(UnsafeMember) as caught:
        extract_tree(archive, dest)
    assert caught.value.rule == rule and caught.value.path == REFUSED[rule]
    assert repr(REFUSED[rule]) in str(caught.value)
    assert list(dest.iterdir()) == []  # checked before anything is written
    assert not Path("/tmp/planted-by-the-tree").exists() and not (tmp_path / "planted").exists()


def test_a_good_tree_is_written_with_its_links_inside_and_no_set_id_bits(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    assert extract_tree(write_tar(tmp_path / "tree.tar", good_tree()), dest) == 8
    assert (dest / "app" / "server.py").read_text() == "print('hi')\n"
    assert os.readlink(dest / "app" / "current") == "lib" and (dest / "app" / "current" / "util.py").is_file()
    assert os.readlink(dest / "docs") == "app/lib/../.."
    assert (dest / "app" / "same.py").read_text() == "print('hi')\n" and not (dest / "app" / "same.py").is_symlink()
    assert (dest / "app" / "server.py").stat().st_mode & 0o7777 == 0o755
    assert (dest / "app" / "lib" / "util.py").stat().st_mode & 0o7777 == 0o755  # 4777 in the tar
    assert (dest / "README.md").stat().st_mtime == 1_700_000_000


_RUNNER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from watcher.suites.source.extract import UnsafeMember, extract_tree
try:
    print(json.dumps({"written": extract_tree(__import__("pathlib").Path(sys.argv[2]),
                                             __import__("pathlib").Path(sys.argv[3])),
                      "version": list(sys.version_info[:3]), "modules": sorted(sys.modules)}))
except UnsafeMember as exc:
    print(json.dumps({"refused": exc.path, "rule": exc.rule, "version": list(sys.version_info[:3])}))
"""


def _run_system_python(archive: Path, dest: Path) -> dict[str, object]:
    done = subprocess.run(
        [str(SYSTEM_PYTHON), "-I", "-S", "-c", _RUNNER, str(ROOT), str(archive), str(dest)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


@pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="no /usr/bin/python3 on this machine")
def test_on_the_system_python_without_site_packages_hostile_trees_are_refused_and_a_good_one_unpacks(
    tmp_path: Path,
) -> None:
    probe = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import tarfile, sys; print(sys.version_info[:3], hasattr(tarfile, 'data_filter'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for rule in ("absolute-link", "escaping-link", "hard-link", "through-link"):
        dest = tmp_path / rule
        dest.mkdir()
        answer = _run_system_python(write_tar(tmp_path / f"{rule}.tar", [*good_tree(), *HOSTILE[rule]()]), dest)
        assert answer["refused"] == REFUSED[rule] and answer["rule"] == rule, answer
        assert list(dest.iterdir()) == []
    dest = tmp_path / "good"
    dest.mkdir()
    answer = _run_system_python(write_tar(tmp_path / "good.tar", good_tree()), dest)
    assert answer["written"] == 8 and os.readlink(dest / "app" / "current") == "lib"
    modules = answer["modules"]
    assert isinstance(modules, list) and not [m for m in modules if m.split(".")[0] in ("yaml", "pydantic", "httpx")]
    if sys.version_info[:3] != tuple(answer["version"]):  # type: ignore[arg-type]
        print(f"ran on {answer['version']} (tarfile filters: {probe.strip()})")


def test_a_repository_with_a_link_out_of_it_is_a_checkout_error_naming_the_path(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", {"server/app.py": "x = 1\n"})
    (repo / "server" / "token").symlink_to("/etc/mcp-watcher/slack-token")
    (repo / "server" / "up").symlink_to("../../..")
    commit_all(repo, "links out")
    assert "120000" in git(repo, "ls-tree", "-r", "HEAD", "server/token")  # the link is really committed
    result = checkout(
        f"file://{repo}",
        GitSource(git=f"file://{repo}", ref="main"),
        cache_root=tmp_path / "cache",
        dest=tmp_path / "runs" / "r1" / "source",
        token=None,
        timeout=60,
        secret_names=set(),
        protocols=("file",),
    )
    assert not result.ok and result.commit is None
    assert result.error is not None and "internal error" not in result.error
    assert "'server/token'" in result.error and "/etc/mcp-watcher/slack-token" in result.error
    assert "[absolute-link]" in result.error
    assert not (tmp_path / "runs" / "r1" / "source").exists()
