"""Local git repositories made with the real `git` CLI, for the source tests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_AUTHOR_DATE": "2026-11-01T12:00:00Z",
    "GIT_COMMITTER_DATE": "2026-11-01T12:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=_ENV, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def new_repo(folder: Path, files: dict[str, str] | None = None, copy_from: Path | None = None, into: str = "") -> Path:
    """A repository at `folder` on branch main with one commit of `files` (and a copy of `copy_from` at `into`)."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "--quiet", "--initial-branch", "main")
    if copy_from is not None:
        shutil.copytree(
            copy_from,
            folder / into if into else folder,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", ".venv", "node_modules"),
        )
    for name, text in (files or {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return commit_all(folder, "initial")


def commit_all(repo: Path, message: str) -> Path:
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", message)
    return repo


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD")


def bare_clone(repo: Path, dest: Path) -> Path:
    subprocess.run(
        ["git", "clone", "--quiet", "--bare", str(repo), str(dest)], env=_ENV, check=True, capture_output=True
    )
    return dest
