"""A local server that speaks the parts of GitHub that mcp-watcher uses (REST API + raw files).

Threaded, on 127.0.0.1 and a free port; use it as the API base URL (``spec.github_api_url``).

    with FakeGitHub() as gh:
        gh.put_raw("org/repo/main/docs/deprecated.mdx", text)     # served at gh.raw_url(same path)
        gh.set_releases("org/repo", [FakeGitHub.release("2026-07-28", "2026-07-28T17:00:00Z")])
        gh.set_tags("org/repo", ["v1.2.0", "v1.3.0-beta.1"])
        gh.add_commit("org/repo", "seps/2596-lifecycle.md", text, "2026-06-03T12:00:00Z")
        gh.fail_next("/repos/org/repo/releases", status=503, times=2)
        gh.requests                                                 # every request, in order
        gh.count("/raw/")                                           # requests whose path starts so

Endpoints (GET):
  /raw/<path>                                   a file put with put_raw
  /repos/<o>/<r>/releases                       the list given to set_releases (newest first, as given),
                                                paged by ``per_page`` (default 30) and ``page`` (from 1)
  /repos/<o>/<r>/tags                           the list given to set_tags (paged the same way)
  /repos/<o>/<r>/commits?path=P                 commits that touched P, newest first
  /repos/<o>/<r>/contents/<dir>                 a directory listing (files that have commits, and folders)
  /repos/<o>/<r>/contents/<file>[?ref=SHA]      the file at that commit (latest without ref): JSON with
                                                base64 content, or the raw text with
                                                ``Accept: application/vnd.github.raw``
  /orgs/<org>/repos                             the list given to set_org_repos (paged like releases)
  /repos/<o>/<r>/teams                          the teams given to set_repo_teams (``[{"slug": …}]``)
  /repos/<o>/<r>/actions/…                      GitHub Actions (POST dispatches too): see github_actions.py,
                                                driven through ``gh.actions``
Every 200 carries a strong ETag (and Last-Modified); ``If-None-Match`` with it answers 304.
Unknown paths answer 404 with GitHub's ``{"message": "Not Found"}``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler
from typing import Any, Self
from urllib.parse import parse_qs, unquote, urlsplit

from tests.fakes.github_actions import FakeActions
from tests.fakes.loopback import LoopbackServer

LAST_MODIFIED = format_datetime(datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC), usegmt=True)


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    status: int = 0
    at: float = field(default_factory=time.monotonic)
    """When it arrived (time.monotonic): pacing is checked on it."""


@dataclass
class _Commit:
    sha: str
    path: str
    content: bytes
    date: str
    message: str


@dataclass
class _Failure:
    status: int
    times: int
    body: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class FakeGitHub(LoopbackServer):
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._raw: dict[str, tuple[bytes, str]] = {}
        self._releases: dict[str, list[dict[str, Any]]] = {}
        self._tags: dict[str, list[dict[str, Any]]] = {}
        self._commits: dict[str, list[_Commit]] = {}
        self._failures: dict[str, _Failure] = {}
        self._org_repos: dict[str, list[dict[str, Any]]] = {}
        self._repo_teams: dict[str, list[dict[str, Any]]] = {}
        self.actions = FakeActions("")

    def start(self) -> Self:
        super().start()
        self.actions.base = self.base
        return self

    # --- addresses (start/stop come from LoopbackServer) -------------------------------------------

    @property
    def url(self) -> str:
        return self.base

    @property
    def api_url(self) -> str:
        return self.url

    def raw_url(self, path: str) -> str:
        return f"{self.url}/raw/{path.lstrip('/')}"

    # --- content ---------------------------------------------------------------------------------

    def put_raw(self, path: str, body: str | bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        with self._lock:
            self._raw[path.lstrip("/")] = (data, content_type)

    def remove_raw(self, path: str) -> None:
        with self._lock:
            self._raw.pop(path.lstrip("/"), None)

    @staticmethod
    def release(tag: str, published_at: str, prerelease: bool = False, **extra: Any) -> dict[str, Any]:
        """A release object shaped like GitHub's (the fields clients read, plus ``extra``)."""
        return {
            "tag_name": tag,
            "name": tag,
            "draft": False,
            "prerelease": prerelease,
            "created_at": published_at,
            "published_at": published_at,
            "html_url": f"https://github.com/example/releases/tag/{tag}",
            **extra,
        }

    def set_releases(self, repo: str, releases: list[dict[str, Any]]) -> None:
        with self._lock:
            self._releases[repo] = list(releases)

    def set_org_repos(self, org: str, repos: list[dict[str, Any]]) -> None:
        """An organisation's repositories, each at least {"name", "clone_url"} (topics, archived optional)."""
        rows = [
            {"full_name": f"{org}/{r['name']}", "topics": [], "archived": False, "default_branch": "main", **r}
            for r in repos
        ]
        with self._lock:
            self._org_repos[org] = rows

    def set_repo_teams(self, repo: str, slugs: list[str]) -> None:
        """The teams with access to ``repo`` (GitHub answers their slug, name and permission)."""
        with self._lock:
            self._repo_teams[repo] = [{"slug": slug, "name": slug.title(), "permission": "push"} for slug in slugs]

    def set_tags(self, repo: str, tags: list[str | dict[str, Any]]) -> None:
        rows = [t if isinstance(t, dict) else {"name": t, "commit": {"sha": _sha(t.encode())}} for t in tags]
        with self._lock:
            self._tags[repo] = rows

    def add_commit(self, repo: str, path: str, content: str | bytes, date: str, message: str = "update") -> str:
        """Record a new version of ``path`` (newest last); returns the commit's sha."""
        data = content.encode("utf-8") if isinstance(content, str) else content
        sha = _sha(f"{repo}:{path}:{date}:{len(self._commits.get(repo, []))}".encode() + data)
        with self._lock:
            self._commits.setdefault(repo, []).append(_Commit(sha, path.strip("/"), data, date, message))
        return sha

    def fail_next(
        self, path_prefix: str, status: int = 500, times: int = 1, body: str = "", headers: dict[str, str] | None = None
    ) -> None:
        """The next ``times`` requests whose path starts with ``path_prefix`` answer ``status`` (with ``headers``)."""
        with self._lock:
            self._failures[path_prefix] = _Failure(
                status, times, body or json.dumps({"message": "fake failure"}), dict(headers or {})
            )

    def count(self, path_prefix: str) -> int:
        return sum(1 for r in self.requests if r.path.startswith(path_prefix))

    # --- serving ---------------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        path = unquote(parts.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        record = Recorded(handler.command, path, query, {k.lower(): v for k, v in handler.headers.items()})
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        with self._lock:
            self.requests.append(record)
            failure = next((f for p, f in self._failures.items() if path.startswith(p) and f.times > 0), None)
            if failure:
                failure.times -= 1
        if failure:
            record.status = failure.status
            self._send(handler, failure.status, failure.body.encode(), "application/json", headers=failure.headers)
            return
        if "/actions/" in path or path.startswith("/blob/"):
            self._actions(handler, path, query, body, record)
            return
        status, body, content_type = self._route(path, query, record.headers)
        record.status = status
        if status == 200 and record.headers.get("if-none-match") == _etag(body):
            record.status = 304
            self._send(handler, 304, b"", content_type, etag_of=body)
            return
        self._send(handler, status, body, content_type, etag=status == 200)

    def _actions(
        self, handler: BaseHTTPRequestHandler, path: str, query: dict[str, str], body: bytes, record: Recorded
    ) -> None:
        """Answers /actions/ and artifact blobs; the status is recorded before the answer goes out (a test
        reading it after its client's call must see it)."""
        headers = record.headers
        if path.startswith("/blob/artifacts/"):
            data = self.actions.blob(path.rsplit("/", 1)[-1])
            record.status = 200 if data is not None else 404
            self._send(handler, record.status, data or b"", "application/zip")
            return
        segments = path.strip("/").split("/")
        answer = None
        if len(segments) >= 5 and segments[0] == "repos":
            repo = f"{segments[1]}/{segments[2]}"
            answer = self.actions.route(handler.command, repo, segments[3:], query, body, headers.get("authorization"))
        status, payload, extra = answer or (404, {"message": "Not Found"}, {})
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        if handler.command == "GET" and status == 200 and not isinstance(payload, bytes):
            if headers.get("if-none-match") == _etag(data):  # a conditional GET of an unchanged answer
                record.status = 304
                self._send(handler, 304, b"", "application/json; charset=utf-8", etag_of=data)
                return
            extra = {**extra, "ETag": _etag(data)}
        record.status = int(status)
        self._send(handler, status, data, "application/json; charset=utf-8", headers=extra)

    def _route(self, path: str, query: dict[str, str], headers: dict[str, str]) -> tuple[int, bytes, str]:
        with self._lock:
            if path.startswith("/raw/"):
                found = self._raw.get(path[len("/raw/") :])
                return (200, *found) if found else _not_found()
            segments = path.strip("/").split("/")
            if len(segments) == 3 and segments[0] == "orgs" and segments[2] == "repos":
                return _json(self._page(self._org_repos.get(segments[1], []), query))
            if len(segments) < 4 or segments[0] != "repos":
                return _not_found()
            repo, rest = f"{segments[1]}/{segments[2]}", segments[3:]
            if rest == ["releases"] and repo in self._releases:
                return _json(self._page(self._releases[repo], query))
            if rest == ["tags"] and repo in self._tags:
                return _json(self._page(self._tags[repo], query))
            if rest == ["commits"]:
                return self._commit_list(repo, query.get("path", ""))
            if rest == ["teams"] and repo in self._repo_teams:
                return _json(self._page(self._repo_teams[repo], query))
            if rest[0] == "contents":
                return self._contents(repo, "/".join(rest[1:]), query.get("ref"), headers.get("accept", ""))
        return _not_found()

    @staticmethod
    def _page(items: list[dict[str, Any]], query: dict[str, str]) -> list[dict[str, Any]]:
        per_page = int(query.get("per_page", 30))
        page = int(query.get("page", 1))
        return items[(page - 1) * per_page : page * per_page]

    def _commit_list(self, repo: str, path: str) -> tuple[int, bytes, str]:
        commits = [c for c in self._commits.get(repo, []) if c.path == path.strip("/")]
        listing = [
            {
                "sha": c.sha,
                "commit": {
                    "author": {"name": "Fake Author", "date": c.date},
                    "committer": {"name": "GitHub", "date": c.date},
                    "message": c.message,
                },
                "html_url": f"https://github.com/{repo}/commit/{c.sha}",
            }
            for c in reversed(commits)
        ]
        return _json(listing)

    def _contents(self, repo: str, path: str, ref: str | None, accept: str) -> tuple[int, bytes, str]:
        commits = self._commits.get(repo, [])
        versions = [c for c in commits if c.path == path and (ref is None or c.sha == ref)]
        if versions:
            commit = versions[-1]
            if "application/vnd.github.raw" in accept:
                return 200, commit.content, "text/plain; charset=utf-8"
            return _json(
                {
                    "type": "file",
                    "name": path.rsplit("/", 1)[-1],
                    "path": path,
                    "sha": _sha(commit.content),
                    "encoding": "base64",
                    "content": base64.b64encode(commit.content).decode(),
                }
            )
        prefix = path.rstrip("/") + "/" if path.strip("/") else ""
        below = [c.path[len(prefix) :] for c in commits if c.path.startswith(prefix)]
        names = sorted({rest for rest in below if "/" not in rest})
        folders = sorted({rest.split("/", 1)[0] for rest in below if "/" in rest})
        if not names and not folders:
            return _not_found()
        return _json(
            [{"type": "dir", "name": d, "path": prefix + d, "sha": _sha((prefix + d).encode())} for d in folders]
            + [{"type": "file", "name": n, "path": prefix + n, "sha": _sha((prefix + n).encode())} for n in names]
        )

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        content_type: str,
        etag: bool = False,
        etag_of: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        if etag or etag_of is not None:
            handler.send_header("ETag", _etag(body if etag_of is None else etag_of))
            handler.send_header("Last-Modified", LAST_MODIFIED)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if body:
            handler.wfile.write(body)


def _sha(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _etag(body: bytes) -> str:
    return f'"{hashlib.sha256(body).hexdigest()[:32]}"'


def _json(value: Any) -> tuple[int, bytes, str]:
    return 200, json.dumps(value).encode("utf-8"), "application/json; charset=utf-8"


def _not_found() -> tuple[int, bytes, str]:
    return 404, json.dumps({"message": "Not Found"}).encode("utf-8"), "application/json; charset=utf-8"
