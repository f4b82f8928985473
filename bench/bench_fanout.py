"""Benchmark: one beta fanned out to 300 servers in 100 repositories on GitHub Actions, against a loopback
GitHub that enforces GitHub's limits (issue 26).

    .venv/bin/python bench/bench_fanout.py [--servers 300] [--repos 100] [--minute 1.0] [--quick]

Goals: GitHub requests that count against the primary limit per run ≤ 3 on average; limits hit 0.
Also printed: the time from the first dispatch to the last result, and the same figures for the per-run
way (one listing per run per poll, one artifact list per run, no conditional requests) measured in the
same run, with the ratio.

The loopback GitHub enforces: 5,000 counted requests per hour (a 304 is not counted), 900 points per
minute (GET 1, POST 5), 80 content-creating requests (dispatches) per minute, 100 concurrent requests.
A broken limit answers 403/429 with retry-after (or x-ratelimit-remaining: 0) and is counted. Time is
scaled: one GitHub minute is `--minute` seconds here; each run takes 3 GitHub minutes from its dispatch.

`--quick` (30 servers in 10 repositories, a shorter minute) is what the smoke test runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from watcher.suites.executors.fanout import FanOut, Job, Limits  # noqa: E402

RUN_MINUTES = 3.0


@dataclass
class _Run:
    id: int
    repo: str
    title: str
    created: float


@dataclass
class LimitedGitHub:
    """Actions dispatch, run and artifact listings, artifact zips — and GitHub's limits, enforced."""

    minute: float
    hour_budget: int = 5000
    points_per_minute: int = 900
    creates_per_minute: int = 80
    concurrency: int = 100
    runs: dict[str, list[_Run]] = field(default_factory=dict)
    counted: int = 0
    not_modified: int = 0
    limits_hit: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.points: list[tuple[float, int]] = []
        self.creates: list[float] = []
        self.in_flight = 0
        self.next_id = 1000

    def status_of(self, run: _Run, now: float) -> tuple[str, str | None]:
        age = (now - run.created) / self.minute
        if age >= RUN_MINUTES:
            return "completed", "success"
        return ("in_progress" if age >= 0.5 else "queued"), None

    def handle(
        self, method: str, path: str, query: dict[str, str], etag: str | None
    ) -> tuple[int, dict[str, str], bytes]:
        now = time.monotonic()
        with self.lock:
            self.in_flight += 1
            try:
                if self.in_flight > self.concurrency:
                    return self._limit("concurrency", 429, {"retry-after": "60"})
                window = now - self.minute
                self.points = [(t, p) for t, p in self.points if t > window]
                self.creates = [t for t in self.creates if t > window]
                cost = 5 if method == "POST" else 1
                if sum(p for _, p in self.points) + cost > self.points_per_minute:
                    return self._limit("points per minute", 403, {"retry-after": "60"})
                if method == "POST" and len(self.creates) >= self.creates_per_minute:
                    return self._limit("content creation per minute", 403, {"retry-after": "60"})
                if self.counted >= self.hour_budget:
                    return self._limit("primary", 403, {"x-ratelimit-remaining": "0"})
                self.points.append((now, cost))
                if method == "POST":
                    self.creates.append(now)
                status, body = self._route(method, path, query, now)
                headers = {"content-type": "application/json"}
                if status == 200:
                    tag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
                    headers["etag"] = tag
                    if etag == tag:
                        self.not_modified += 1
                        return 304, self._rate(headers), b""
                self.counted += 1
                return status, self._rate(headers), body
            finally:
                self.in_flight -= 1

    def _rate(self, headers: dict[str, str]) -> dict[str, str]:
        remaining = max(self.hour_budget - self.counted, 0)
        return {**headers, "x-ratelimit-limit": str(self.hour_budget), "x-ratelimit-remaining": str(remaining)}

    def _limit(self, which: str, status: int, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        self.limits_hit[which] = self.limits_hit.get(which, 0) + 1
        self.counted += 1
        body = json.dumps({"message": f"You have exceeded a secondary rate limit ({which})"}).encode()
        return status, self._rate(headers), body

    def _route(self, method: str, path: str, query: dict[str, str], now: float) -> tuple[int, bytes]:
        parts = path.strip("/").split("/")
        if len(parts) < 5 or parts[0] != "repos" or parts[3] != "actions":
            return 404, b'{"message": "Not Found"}'
        repo, rest = f"{parts[1]}/{parts[2]}", parts[4:]
        runs = self.runs.setdefault(repo, [])
        if method == "POST" and len(rest) == 3 and rest[0] == "workflows" and rest[2] == "dispatches":
            self.next_id += 1
            return 204, b""  # the run itself is created by the dispatch body (see Handler)
        if rest == ["runs"]:
            items = []
            for run in runs:
                status, conclusion = self.status_of(run, now)
                if query.get("status") and query["status"] != status:
                    continue
                items.append({"id": run.id, "display_title": run.title, "status": status, "conclusion": conclusion})
            return 200, json.dumps({"total_count": len(items), "workflow_runs": items}).encode()
        if rest == ["artifacts"] or (len(rest) == 3 and rest[0] == "runs" and rest[2] == "artifacts"):
            chosen = [r for r in runs if self.status_of(r, now)[0] == "completed"]
            if len(rest) == 3:
                chosen = [r for r in chosen if str(r.id) == rest[1]]
            items = [
                {
                    "id": r.id * 10,
                    "name": query.get("name", "mcp-watcher-report"),
                    "expired": False,
                    "workflow_run": {"id": r.id},
                    "archive_download_url": f"{self.base}/repos/{repo}/actions/artifacts/{r.id * 10}/zip",
                }
                for r in chosen
            ]
            return 200, json.dumps({"total_count": len(items), "artifacts": items}).encode()
        if len(rest) == 3 and rest[0] == "artifacts" and rest[2] == "zip":
            return 200, b"PK-fake-zip-" + rest[1].encode()
        return 404, b'{"message": "Not Found"}'

    base = ""

    def dispatched(self, repo: str, key: str, now: float) -> None:
        with self.lock:
            self.next_id += 1
            self.runs.setdefault(repo, []).append(_Run(self.next_id, repo, f"mcp-watcher [{key}]", now))


def serve(fake: LimitedGitHub) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args: Any) -> None:
            pass

        def _do(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            status, headers, data = fake.handle(self.command, parts.path, query, self.headers.get("If-None-Match"))
            if self.command == "POST" and status == 204:
                key = json.loads(body)["inputs"]["run_key"]
                segments = parts.path.strip("/").split("/")
                fake.dispatched(f"{segments[1]}/{segments[2]}", key, time.monotonic())
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = _do
        do_POST = _do

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake.base = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def measure(servers: int, repos: int, minute: float, shared: bool) -> dict[str, Any]:
    fake = LimitedGitHub(minute=minute)
    server = serve(fake)
    jobs = [
        Job(
            key=f"srv-{i:03d}-2.0.0b1-{i}",
            repo=f"acme/repo-{i % repos:03d}",
            workflow="mcp-watcher.yml",
            ref="main",
            inputs={
                "server": f"srv-{i:03d}",
                "sdk_package": "mcp",
                "sdk_version": "2.0.0b1",
                "run_key": f"srv-{i:03d}-2.0.0b1-{i}",
            },
        )
        for i in range(servers)
    ]
    try:
        with httpx.Client(timeout=30) as client:
            fan = FanOut(client, fake.base, "t0ken", Limits(minute_seconds=minute), shared_listing=shared)
            started = time.monotonic()
            outcomes = fan.run(jobs, poll_seconds=minute / 4, timeout_seconds=minute * 60)
        finished = [o.finished for o in outcomes if o.finished is not None]
    finally:
        server.shutdown()
    missing = [o.job.key for o in outcomes if o.artifact is None]
    return {
        "runs": servers,
        "results": servers - len(missing),
        "counted": fake.counted,
        "not_modified": fake.not_modified,
        "per_run": fake.counted / servers,
        "limits_hit": sum(fake.limits_hit.values()),
        "limits": dict(fake.limits_hit),
        "seconds": (max(finished) - started) if finished else None,
        "github_minutes": ((max(finished) - started) / minute) if finished else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--servers", type=int, default=300)
    parser.add_argument("--repos", type=int, default=100)
    parser.add_argument("--minute", type=float, default=1.0, help="seconds per GitHub minute (time scale)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.servers, args.repos, args.minute = 30, 10, 0.4
    print(f"{args.servers} servers in {args.repos} repositories, one beta; one GitHub minute = {args.minute:g} s")
    paced = measure(args.servers, args.repos, args.minute, shared=True)
    baseline = measure(args.servers, args.repos, args.minute, shared=False)
    for label, figures in (
        ("fan-out (paced, one listing per repository)", paced),
        ("per-run way (baseline)", baseline),
    ):
        print(
            f"{label}: {figures['results']}/{figures['runs']} results; "
            f"{figures['per_run']:.2f} counted GitHub requests per run ({figures['counted']} counted, "
            f"{figures['not_modified']} answered 304); limits hit {figures['limits_hit']} {figures['limits'] or ''}; "
            f"first dispatch → last result {figures['seconds']:.1f} s ({figures['github_minutes']:.1f} GitHub minutes)"
        )
    print(f"ratio: {paced['per_run'] / baseline['per_run']:.2f} × the baseline's requests per run")
    return 0 if paced["results"] == paced["runs"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
