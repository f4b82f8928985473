"""Many github-actions runs for one beta inside GitHub's limits.

Dispatches are paced under the secondary limits (content-creating requests per minute, points per
minute: a GET is 1 point, a POST 5; one request at a time here, far under the 100 concurrent);
runs are followed with one conditional listing per repository (`GET …/actions/runs?event=
workflow_dispatch&created=>=…` with `If-None-Match`: a 304 does not count against the primary
limit) instead of one call per run; each answer's `x-ratelimit-*` headers keep the primary budget
(shown in /metrics). A limit answered anyway (403/429) is waited out and counted.

`run_batch` is what the service's suite worker uses for several queued runs at once (on the executor's
own GitHubApi, dispatch records and artifact checks); `FanOut` is the benchmark's bare-httpx driver.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx

from watcher.config import LoadedConfig
from watcher.core import clock, untrusted, vault
from watcher.core.run_report import RunReport
from watcher.core.store import Store
from watcher.core.store_schema import RunRow
from watcher.core.timefmt import parse_iso
from watcher.suites.executors.budget import BUDGET, Budget
from watcher.suites.executors.github_actions import Follow, finish_report, read_token
from watcher.suites.executors.github_api import (
    API_VERSION,
    SECONDARY_WAIT,
    ActionsError,
    GitHubApi,
    Interrupted,
    message,
)
from watcher.suites.settings import GitHubActionsExecutor, Server

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limits:
    """Under GitHub's documented secondary limits (80 content-creating requests and 900 points a minute),
    with a margin for clock skew between us and GitHub; `minute_seconds` scales time (benchmarks)."""

    creates_per_minute: int = 72
    points_per_minute: int = 810
    get_points: int = 1
    post_points: int = 5
    minute_seconds: float = 60.0


@dataclass
class Pacer:
    """Waits before a request that would pass a per-minute limit (sliding one-minute windows)."""

    limits: Limits
    now: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    _points: deque[tuple[float, int]] = field(default_factory=deque)
    _creates: deque[float] = field(default_factory=deque)

    def acquire(self, method: str) -> None:
        cost = self.limits.post_points if method == "POST" else self.limits.get_points
        window = self.limits.minute_seconds
        while True:
            t = self.now()
            while self._points and self._points[0][0] <= t - window:
                self._points.popleft()
            while self._creates and self._creates[0] <= t - window:
                self._creates.popleft()
            points = sum(p for _, p in self._points)
            waits = []
            if points + cost > self.limits.points_per_minute and self._points:
                waits.append(self._points[0][0] + window - t)
            if method == "POST" and len(self._creates) >= self.limits.creates_per_minute:
                waits.append(self._creates[0] + window - t)
            if not waits:
                break
            self.sleep(max(max(waits), 0.001))
        self._points.append((t, cost))
        if method == "POST":
            self._creates.append(t)


@dataclass(frozen=True)
class Job:
    key: str
    """Carried in the run's title (`[key]`, the shipped workflow's run-name) to find the run."""
    repo: str
    workflow: str
    ref: str
    inputs: dict[str, str]


@dataclass
class Outcome:
    job: Job
    run_id: int | None = None
    conclusion: str | None = None
    artifact: bytes | None = None
    error: str | None = None
    finished: float | None = None


@dataclass
class FanOut:
    client: httpx.Client
    base: str
    token: str
    limits: Limits = field(default_factory=Limits)
    budget: Budget = field(default_factory=Budget)
    shared_listing: bool = True
    """False: the per-run way (one unconditional GET per run per poll), kept as the benchmark's baseline."""
    now: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    artifact: str = "mcp-watcher-report"

    def __post_init__(self) -> None:
        self.pacer = Pacer(self.limits, self.now, self.sleep)
        self._etags: dict[str, tuple[str, Any]] = {}

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            **kwargs.pop("headers", {}),
        }
        for _ in range(10):
            self.pacer.acquire(method)
            response = self.client.request(method, f"{self.base.rstrip('/')}{path}", headers=headers, **kwargs)
            self.budget.observe(response)
            BUDGET.observe(response)
            if response.status_code in (403, 429) and (
                "retry-after" in response.headers or response.headers.get("x-ratelimit-remaining") == "0"
            ):
                self.budget.limited += 1
                BUDGET.limited += 1
                wait = float(response.headers.get("retry-after") or SECONDARY_WAIT)
                self.sleep(wait * self.limits.minute_seconds / 60.0)
                continue
            return response
        return response

    def run(self, jobs: list[Job], poll_seconds: float, timeout_seconds: float) -> list[Outcome]:
        """Dispatch every job (paced), follow them until each completed, fetch each artifact."""
        outcomes = {job.key: Outcome(job) for job in jobs}
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
        # A repository's runs dispatched one after another finish close together: fewer listing changes.
        for job in sorted(jobs, key=lambda j: j.repo):
            path = f"/repos/{job.repo}/actions/workflows/{job.workflow}/dispatches"
            response = self.call("POST", path, json={"ref": job.ref, "inputs": job.inputs})
            if response.status_code not in (200, 204):
                outcomes[job.key].error = f"dispatch refused (HTTP {response.status_code})"
        deadline = self.now() + timeout_seconds
        waiting = {k for k, o in outcomes.items() if o.error is None}
        while waiting and self.now() < deadline:
            for repo in sorted({outcomes[k].job.repo for k in waiting}):
                mine = [k for k in waiting if outcomes[k].job.repo == repo]
                done = {}
                for key, item in self._runs_of(repo, mine, since).items():
                    outcomes[key].run_id = int(item["id"])
                    if item.get("status") == "completed":
                        done[int(item["id"])] = key
                        outcomes[key].conclusion = item.get("conclusion")
                if done and (len(done) == len(mine) or not self.shared_listing):
                    # One artifact listing once the repository's runs are all done (the per-run way: each).
                    for run_id, url in self._artifacts_of(repo, done).items():
                        outcome = outcomes[done[run_id]]
                        outcome.artifact = self._download(url)
                        outcome.finished = self.now()
                        waiting.discard(done[run_id])
            if waiting:
                self.sleep(poll_seconds)
        for key in waiting:
            outcomes[key].error = "no completed run within the timeout"
        return list(outcomes.values())

    def _runs_of(self, repo: str, keys: list[str], since: str) -> dict[str, dict[str, Any]]:
        if not self.shared_listing:
            found = {}
            for key in keys:  # the per-run way: each run asked for by itself (its id found by a listing)
                params = {"event": "workflow_dispatch", "per_page": "100"}
                response = self.call("GET", f"/repos/{repo}/actions/runs", params=params)
                for item in (
                    untrusted.answer_json(response.content, str(response.url), expect=dict).get("workflow_runs") or []
                ):
                    if f"[{key}]" in str(item.get("display_title") or ""):
                        found[key] = item
            return found
        # Only completed runs: the listing changes (a counted 200) only when one of them completes.
        params = {"event": "workflow_dispatch", "status": "completed", "created": f">={since}", "per_page": "100"}
        listing = self._listing(f"/repos/{repo}/actions/runs", params, "workflow_runs")
        if listing is None:
            return {}
        by_key = {}
        for item in listing:
            title = str(item.get("display_title") or "")
            for key in keys:
                if f"[{key}]" in title:
                    by_key[key] = item
        return by_key

    def _listing(self, path: str, params: dict[str, str], field_name: str) -> list[dict[str, Any]] | None:
        """A conditional GET of a listing: the cached copy on a 304 (which the primary limit does not count)."""
        cache_key = path + "?" + "&".join(f"{k}={v}" for k, v in sorted(params.items()))
        cached = self._etags.get(cache_key)
        headers = {"If-None-Match": cached[0]} if cached else {}
        response = self.call("GET", path, params=params, headers=headers)
        if response.status_code == 304 and cached:
            return list(cached[1])
        if response.status_code != 200:
            return None
        items = untrusted.answer_json(response.content, str(response.url), expect=dict).get(field_name) or []
        if response.headers.get("etag"):
            self._etags[cache_key] = (response.headers["etag"], items)
        return list(items)

    def _artifacts_of(self, repo: str, run_ids: dict[int, str]) -> dict[int, str]:
        """One listing of the repository's artifacts for every completed run at once: run id → download URL."""
        params = {"name": self.artifact, "per_page": "100"}
        if self.shared_listing:
            items = self._listing(f"/repos/{repo}/actions/artifacts", params, "artifacts") or []
        else:  # the per-run way: each run's own artifact list
            items = []
            for each in run_ids:
                response = self.call("GET", f"/repos/{repo}/actions/runs/{each}/artifacts", params=params)
                if response.status_code == 200:
                    answer = untrusted.answer_json(response.content, str(response.url), expect=dict)
                    items += answer.get("artifacts") or []
        found = {}
        for item in items:
            run_id = (item.get("workflow_run") or {}).get("id")
            url = item.get("archive_download_url")
            if isinstance(run_id, int) and run_id in run_ids and url and not item.get("expired"):
                found[run_id] = str(url)
        return found

    def _download(self, url: str) -> bytes | None:
        response = self.call("GET", url.removeprefix(self.base.rstrip("/")))
        return response.content if response.status_code == 200 else None


# --- the service's fan-out: many queued github-actions runs at once --------------------------------


@dataclass
class _Repo:
    """The conditional listings of one repository's completed dispatched runs."""

    api: GitHubApi
    repo: str
    since: str
    pages: dict[int, tuple[str | None, list[dict[str, Any]]]] = field(default_factory=dict)
    """Page number → its ETag and items, for the next conditional listing."""


def run_batch(
    loaded: LoadedConfig,
    store: Store,
    runs: list[tuple[RunRow, Server]],
    stop: threading.Event | None,
    deliver: Callable[[RunRow, RunReport], None],
    *,
    limits: Limits | None = None,
    transport: httpx.BaseTransport | None = None,
    environ: dict[str, str] | None = None,
) -> None:
    """Carry out many github-actions runs as one batch and `deliver` each run's report as it is had.

    Dispatches are paced under the secondary limits (one Pacer for the batch); each repository's runs are
    followed with one conditional listing of its completed runs per poll, not one call per run; a completed
    run's artifact is read and checked by the executor's own code (Follow.collect). A run already in the
    store's dispatched_runs (a restart) is followed, never dispatched again.
    """
    started = time.monotonic()
    env = dict(vault.environ() if environ is None else environ)

    def pause(seconds: float) -> None:  # a pacing wait ends when the service stops
        if stop is None:
            time.sleep(seconds)
        elif stop.wait(seconds):
            raise Interrupted()

    pacer = Pacer(limits or Limits(), sleep=pause)
    with httpx.Client(transport=transport, trust_env=transport is None) as client:
        apis: dict[tuple[str, str], GitHubApi] = {}
        follows: list[tuple[Follow, datetime]] = []
        for run, server in runs:
            settings = server.executor
            assert isinstance(settings, GitHubActionsExecutor)
            follow: Follow | None = None
            try:
                token = read_token(loaded, settings, env)
                api = apis.setdefault(
                    (settings.api_url, token),
                    GitHubApi(settings.api_url, token, client, loaded.config.http_client, time.sleep, stop=stop),
                )
                follow = Follow(loaded, store, run, server, settings, stop, api)
                if stop is not None and stop.is_set():
                    raise Interrupted()
                if store.dispatched(follow.key) is None:
                    pacer.acquire("POST")
                    if stop is not None and stop.is_set():
                        raise Interrupted()
                    follow.dispatch()
                else:
                    follow.actions["resumed"] = True
                    log.info("resuming the Actions run of %s (no new dispatch)", follow.key)
                row = store.dispatched(follow.key) or {}
                if row.get("gh_run_id"):
                    follow.actions["run_id"], follow.actions["html_url"] = row["gh_run_id"], row["html_url"]
                dispatched = parse_iso(row.get("dispatched_at")) or clock.now()
                follows.append((follow, dispatched))
            except Interrupted:
                deliver(run, finish_report(loaded, run, server, settings, follow, INTERRUPTED, started))
            except ActionsError as exc:
                deliver(run, finish_report(loaded, run, server, settings, follow, str(exc), started))
        _follow_all(loaded, follows, pacer, stop, deliver, started)


INTERRUPTED = "interrupted while following the Actions run"


def _follow_all(
    loaded: LoadedConfig,
    follows: list[tuple[Follow, datetime]],
    pacer: Pacer,
    stop: threading.Event | None,
    deliver: Callable[[RunRow, RunReport], None],
    started: float,
) -> None:
    """Poll each repository's listing until every run completed (then its artifact) or passed its deadline."""
    repos: dict[tuple[int, str], _Repo] = {}
    for follow, dispatched in follows:
        since = (dispatched - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        repo = repos.setdefault((id(follow.api), follow.repo), _Repo(follow.api, follow.repo, since))
        repo.since = min(repo.since, since)
    waiting = list(follows)

    def finish(follow: Follow, outcome: RunReport | str) -> None:
        deliver(follow.run, finish_report(loaded, follow.run, follow.server, follow.settings, follow, outcome, started))

    while waiting:
        for (api_id, name), repo in repos.items():
            mine = [(f, d) for f, d in waiting if id(f.api) == api_id and f.repo == name]
            if not mine:
                continue
            try:
                if stop is not None and stop.is_set():
                    raise Interrupted()
                items = _completed_runs(repo, pacer)
            except Interrupted:
                for pair in mine:
                    waiting.remove(pair)
                    finish(pair[0], INTERRUPTED)
                continue
            except ActionsError as exc:
                for pair in mine:
                    waiting.remove(pair)
                    finish(pair[0], str(exc))
                continue
            for pair in mine:
                follow, dispatched = pair
                item = _item_of(follow, items)
                outcome: RunReport | str | None = None
                if item is not None:
                    if follow.actions["run_id"] is None:
                        follow.found(int(item["id"]), str(item.get("html_url") or ""))
                    follow.actions["status"], follow.actions["conclusion"] = item.get("status"), item.get("conclusion")
                    follow.actions["html_url"] = item.get("html_url") or follow.actions["html_url"]
                    try:
                        outcome = follow.collect(item)
                    except Interrupted:
                        outcome = INTERRUPTED
                    except ActionsError as exc:
                        outcome = str(exc)
                elif clock.now() >= dispatched + timedelta(minutes=follow.settings.timeout_minutes):
                    minutes = follow.settings.timeout_minutes
                    what = "no run titled with" if follow.actions["run_id"] is None else "no completed run for"
                    outcome = f"the run did not complete within {minutes:g} min ({what} [{follow.key}])"
                if outcome is not None:
                    waiting.remove(pair)
                    finish(follow, outcome)
        if waiting:
            poll = min(f.settings.poll_seconds for f, _ in waiting)
            if stop is not None and stop.wait(poll):
                for follow, _ in waiting:
                    finish(follow, INTERRUPTED)
                return
            if stop is None:
                time.sleep(poll)


def _item_of(follow: Follow, items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The completed run of this follow in a listing: its recorded id, else its key in the title."""
    marker = f"[{follow.key}]"
    for item in items:
        if follow.actions["run_id"] is not None:
            if int(item.get("id") or 0) == int(follow.actions["run_id"]):
                return item
        elif marker in str(item.get("display_title") or "") or marker in str(item.get("name") or ""):
            return item
    return None


def _completed_runs(repo: _Repo, pacer: Pacer) -> list[dict[str, Any]]:
    """Conditional listings of the repository's completed dispatched runs (a 304: that page's last items
    again); a full page means more: the next page is listed too (each page has its own ETag)."""
    found: list[dict[str, Any]] = []
    for page in range(1, MAX_PAGES + 1):
        params = {"event": "workflow_dispatch", "status": "completed", "created": f">={repo.since}"}
        params |= {"per_page": str(PER_PAGE), "page": str(page)}
        etag, items = repo.pages.get(page, (None, []))
        headers = {"If-None-Match": etag} if etag else {}
        pacer.acquire("GET")
        response = repo.api.call("GET", f"/repos/{repo.repo}/actions/runs", params=params, headers=headers)
        if response.status_code != 304 or etag is None:
            if response.status_code != 200:
                raise ActionsError(f"cannot list the workflow runs (HTTP {response.status_code}: {message(response)})")
            answer = untrusted.answer_json(response.content, str(response.url), expect=dict)
            items = list(answer.get("workflow_runs") or [])
            repo.pages[page] = (response.headers.get("etag"), items)
        found += items
        if len(items) < PER_PAGE:
            break
    return found


PER_PAGE = 100
MAX_PAGES = 10
"""At most 1,000 completed runs of one repository looked through per poll (GitHub's search cap)."""
