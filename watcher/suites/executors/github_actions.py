"""The github-actions executor: the run happens in the team's repository, on GitHub Actions.

dispatch (workflow_dispatch with inputs server, sdk_package, sdk_version, run_key) → find the run
whose title carries `[run_key]` (the shipped workflow puts it there with `run-name:`) → follow it
until it completes → download its artifact (a zip holding the `check --json` report) → that report,
with a link to the run, is the result. Every way this can go wrong is an `error` report with the
reason and a link, never a drop and never a pass. The store remembers each dispatch by run key, so a
restart follows the run it already started instead of dispatching again. Rate limits
(`retry-after`, `x-ratelimit-remaining`/`-reset`, secondary limits) are waited out, but every wait
ends on stop and none goes past the run's deadline (`timeout_minutes`). A dispatch whose answer was
lost (5xx, no answer) may have started a run: it is looked up by its run key before it is sent again.
The artifact is bounded (download, inflated and report.json caps): over a cap it is an `error`.
The CI judged the contract with the accept file only; the watcher adds the server's Slack accepts to the
report it read and judges it again, as a local run would (`judge.contract.add_slack_accepts`).
"""

from __future__ import annotations

import io
import json
import logging
import re
import threading
import time
import zipfile
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx

from watcher.config import LoadedConfig
from watcher.core import clock, untrusted, vault
from watcher.core.run_report import REPORT_VERSION, ActionsPart, ReportError, RunReport, load_report
from watcher.core.store import Store
from watcher.core.store_schema import RunRow
from watcher.core.timefmt import parse_iso
from watcher.suites.executors.github_api import (
    ActionsError,
    GitHubApi,
    Interrupted,
    TooLarge,
    Uncertain,
    message,
)
from watcher.suites.judge.contract import add_slack_accepts
from watcher.suites.runner import prune_runs
from watcher.suites.settings import GitHubActionsExecutor, Server
from watcher.suites.state import ERROR, REPORT_FILE, new_run_id, sdk_package_of

log = logging.getLogger(__name__)


DISPATCH_INPUTS = ("server", "sdk_package", "sdk_version", "run_key")
"""The inputs the team's workflow declares (deploy/github/workflows/mcp-watcher.yml)."""


def run_key(run: RunRow) -> str:
    """One key per queued run: the same after a restart (the store's run id does not change)."""
    raw = f"{run['server']}-{run['sdk_version']}-{run['id']}"
    return re.sub(r"[^A-Za-z0-9._-]", "_", raw)


class _Follow:
    """One run on GitHub Actions, from dispatch to report."""

    def __init__(
        self,
        loaded: LoadedConfig,
        store: Store,
        run: RunRow,
        server: Server,
        settings: GitHubActionsExecutor,
        stop: threading.Event | None,
        api: GitHubApi,
    ) -> None:
        self.loaded, self.store, self.run, self.server, self.settings = loaded, store, run, server, settings
        self.stop, self.api = stop, api
        self.zip_bytes = b""
        self.key = run_key(run)
        self.repo = settings.repo
        self.link = f"{settings.web_url.rstrip('/')}/{self.repo}/actions/workflows/{settings.workflow}"
        self.actions: ActionsPart = {
            "repo": self.repo,
            "workflow": settings.workflow,
            "ref": settings.ref,
            "run_key": self.key,
            "run_id": None,
            "html_url": None,
            "workflow_url": self.link,
            "status": None,
            "conclusion": None,
            "resumed": False,
        }

    def sleep(self, seconds: float) -> None:
        """A pause between two looks at GitHub: ends on stop, never past the run's deadline."""
        self.api.sleep(seconds, "waiting for the Actions run", clip=True)

    def report(self) -> RunReport:
        row = self.store.dispatched(self.key)
        if row is None:
            self.dispatch()
            row = self.store.dispatched(self.key)
            assert row is not None
        else:
            self.actions["resumed"] = True
            log.info("resuming the Actions run of %s (no new dispatch)", self.key)
        if row.get("gh_run_id"):
            self.actions["run_id"], self.actions["html_url"] = row["gh_run_id"], row["html_url"]
        else:
            self.find()
        completed = self.follow(row)
        return self.collect(completed)

    def dispatch(self) -> None:
        sdk_package = sdk_package_of(self.loaded.config, self.server)
        self.store.record_dispatch(
            self.key,
            server=self.server.name,
            sdk_version=self.run["sdk_version"],
            repo=self.repo,
            workflow=self.settings.workflow,
            state="dispatching",
            dispatched_at=clock.now().isoformat(),
        )
        body = {
            "ref": self.settings.ref,
            "inputs": {
                "server": self.server.name,
                "sdk_package": sdk_package,
                "sdk_version": self.run["sdk_version"],
                "run_key": self.key,
            },
        }
        path = f"/repos/{self.repo}/actions/workflows/{self.settings.workflow}/dispatches"
        response = None
        for attempt in range(self.api.settings.retries + 1):
            try:
                response = self.api.call("POST", path, unsafe=True, json=body)
                break
            except Uncertain as exc:
                # GitHub may have started the run although the answer was lost: look before sending again.
                log.warning("dispatch of %s got no clear answer (%s); looking it up by its key", self.key, exc)
                if self.look_up(self.settings.lookup_seconds):  # found: recorded with its run id
                    return
                if attempt == self.api.settings.retries:
                    what = f"dispatch got no clear answer and no run with its key appeared ({exc})"
                    raise ActionsError(what) from None
                self.api.sleep(self.api.settings.backoff_seconds * 2 ** (attempt + 1), "dispatch backoff")
        assert response is not None
        if response.status_code not in (200, 204):
            self.store.record_dispatch(self.key, state="refused")
            what = {
                404: f"workflow {self.settings.workflow} not found in {self.repo} (or the token cannot see it)",
                401: "the token was refused",
                403: "the token may not dispatch workflows in this repository (it needs actions: write)",
                422: f"the workflow refused the dispatch on {self.settings.ref}",
            }.get(response.status_code, "unexpected answer")
            raise ActionsError(f"dispatch refused: {what} (HTTP {response.status_code}: {message(response)})")
        self.store.record_dispatch(self.key, state="dispatched")
        if response.status_code == 200 and response.content:  # return_run_details answers name the run
            details = untrusted.answer_json(response.content, str(response.url), expect=dict)
            if details.get("workflow_run_id"):
                self.found(int(details["workflow_run_id"]), str(details.get("html_url") or ""))

    def found(self, run_id: int, html_url: str) -> None:
        self.actions["run_id"], self.actions["html_url"] = run_id, html_url
        self.store.record_dispatch(self.key, state="found", gh_run_id=run_id, html_url=html_url)

    def find(self) -> None:
        if not self.look_up(self.settings.find_seconds):
            raise ActionsError(
                f"the dispatched run never appeared: no run titled with [{self.key}] within "
                f"{self.settings.find_seconds:.0f} s (does the workflow set run-name with inputs.run_key?)"
            )

    def look_up(self, seconds: float) -> bool:
        """Find the run titled with this run's key, asking for up to `seconds`; True when found (and recorded)."""
        marker = f"[{self.key}]"
        deadline = time.monotonic() + seconds
        params = {"event": "workflow_dispatch", "per_page": "100"}
        while True:
            response = self.api.call("GET", f"/repos/{self.repo}/actions/runs", params=params)
            if response.status_code != 200:
                raise ActionsError(f"cannot list the workflow runs (HTTP {response.status_code}: {message(response)})")
            for item in (
                untrusted.answer_json(response.content, str(response.url), expect=dict).get("workflow_runs") or []
            ):
                if marker in str(item.get("display_title") or "") or marker in str(item.get("name") or ""):
                    self.found(int(item["id"]), str(item.get("html_url") or ""))
                    return True
            if time.monotonic() >= deadline:
                return False
            self.sleep(self.settings.poll_seconds)

    def follow(self, row: dict[str, Any]) -> dict[str, Any]:
        dispatched = parse_iso(row.get("dispatched_at")) or clock.now()
        deadline = dispatched + timedelta(minutes=self.settings.timeout_minutes)
        while True:
            response = self.api.call("GET", f"/repos/{self.repo}/actions/runs/{self.actions['run_id']}")
            if response.status_code != 200:
                raise ActionsError(f"cannot read the run (HTTP {response.status_code}: {message(response)})")
            data: dict[str, Any] = untrusted.answer_json(response.content, str(response.url), expect=dict)
            self.actions["status"], self.actions["conclusion"] = data.get("status"), data.get("conclusion")
            self.actions["html_url"] = data.get("html_url") or self.actions["html_url"]
            if data.get("status") == "completed":
                return data
            if clock.now() >= deadline:
                raise ActionsError(
                    f"the run did not complete within {self.settings.timeout_minutes:g} min "
                    f"(still {data.get('status')})"
                )
            self.sleep(self.settings.poll_seconds)

    def collect(self, data: dict[str, Any]) -> RunReport:
        conclusion = data.get("conclusion")
        self.store.record_dispatch(self.key, state="completed")
        if conclusion in ("cancelled", "timed_out"):
            raise ActionsError(f"the Actions run ended as {conclusion}")
        if conclusion not in ("success", "failure"):
            raise ActionsError(f"the Actions run ended with conclusion {conclusion!r}")
        path = f"/repos/{self.repo}/actions/runs/{self.actions['run_id']}/artifacts"
        response = self.api.call("GET", path, params={"name": self.settings.artifact})
        if response.status_code != 200:
            raise ActionsError(f"cannot list the run's artifacts (HTTP {response.status_code}: {message(response)})")
        listed = untrusted.answer_json(response.content, str(response.url), expect=dict).get("artifacts") or []
        artifacts = [a for a in listed if isinstance(a, dict) and a.get("name") == self.settings.artifact]
        if not artifacts:
            raise ActionsError(f"the run ended ({conclusion}) without the {self.settings.artifact!r} artifact")
        if artifacts[0].get("expired"):
            raise ActionsError(f"the {self.settings.artifact!r} artifact has expired")
        zipped = self.download(int(artifacts[0]["id"]))
        report = self.read_report(zipped)
        if conclusion == "failure" and report["verdict"] == "pass":
            raise ActionsError("the run failed although its report passes; not taken as a pass")
        self.zip_bytes = zipped
        try:  # the CI steered with the accept file only: Slack's entries live in the watcher's state
            return add_slack_accepts(self.loaded, report)
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            raise ActionsError(f"the artifact is not a check report: its contract cannot be read ({exc!r})") from exc

    def download(self, artifact_id: int) -> bytes:
        path = f"/repos/{self.repo}/actions/artifacts/{artifact_id}/zip"
        try:
            response = self.api.call("GET", path, follow_redirects=False, max_bytes=self.settings.max_artifact_bytes)
        except TooLarge as exc:
            limit = self.settings.max_artifact_bytes
            raise ActionsError(f"the artifact is over executor.max_artifact_bytes ({limit:,}); not read") from exc
        if response.status_code in (301, 302, 303, 307, 308) and response.headers.get("location"):
            # A short-lived signed address on another host: it gets no token.
            return self.capped_download(response.headers["location"])
        if response.status_code == 200:
            return response.content
        raise ActionsError(f"cannot download the artifact (HTTP {response.status_code}: {message(response)})")

    def check_artifact_size(self, size: int, *, declared: bool = False) -> None:
        limit = self.settings.max_artifact_bytes
        if size > limit:
            what = f"declares {size:,} bytes" if declared else f"is larger than {limit:,} bytes"
            raise ActionsError(f"the artifact {what}, over executor.max_artifact_bytes ({limit:,}); not read")

    def capped_download(self, url: str) -> bytes:
        """The zip, streamed: refused on its declared length, or as soon as it passes the cap."""
        chunks: list[bytes] = []
        size = 0
        with self.api.client.stream("GET", url, timeout=self.api.settings.timeout_seconds) as blob:
            if blob.status_code != 200:
                raise ActionsError(f"the artifact download answered HTTP {blob.status_code}")
            declared = blob.headers.get("content-length")
            if declared and declared.isdigit():
                self.check_artifact_size(int(declared), declared=True)
            for chunk in blob.iter_bytes():
                size += len(chunk)
                self.check_artifact_size(size)
                chunks.append(chunk)
        return b"".join(chunks)

    def read_report(self, zipped: bytes) -> RunReport:
        """report.json out of the zip, bounded: the entries' declared sizes are checked before anything is
        inflated, and report.json is inflated at most `max_report_bytes` (+1, to know it was more)."""
        settings = self.settings
        try:
            with zipfile.ZipFile(io.BytesIO(zipped)) as archive:
                entries = archive.infolist()
                inflated = sum(entry.file_size for entry in entries)
                if inflated > settings.max_inflated_bytes:
                    raise ActionsError(
                        f"the artifact would inflate to {inflated:,} bytes, over executor.max_inflated_bytes "
                        f"({settings.max_inflated_bytes:,}); not read"
                    )
                found = [e for e in entries if e.filename.rsplit("/", 1)[-1] == REPORT_FILE]
                if not found:
                    raise ActionsError(f"the artifact is not a check report: no {REPORT_FILE} in it")
                entry, limit = found[0], settings.max_report_bytes
                if entry.file_size > limit:
                    raise ActionsError(
                        f"{REPORT_FILE} declares {entry.file_size:,} bytes, over executor.max_report_bytes "
                        f"({limit:,}); not read"
                    )
                with archive.open(entry) as handle:
                    data = handle.read(limit + 1)
                if len(data) > limit:
                    raise ActionsError(f"{REPORT_FILE} inflates past executor.max_report_bytes ({limit:,}); not read")
                report = untrusted.json_document(
                    data, REPORT_FILE, limits=untrusted.Limits("the CI report", limit), expect=dict
                )
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError, EOFError) as exc:
            raise ActionsError(f"the artifact is not a check report: {exc}") from exc
        if not isinstance(report, dict) or report.get("verdict") not in ("pass", "fail", "error"):
            raise ActionsError(f"the artifact is not a check report: {REPORT_FILE} has no verdict")
        if report.get("server") != self.server.name or report.get("sdk_version") != self.run["sdk_version"]:
            raise ActionsError(
                f"the artifact is a report of {_shown(report.get('server'))} on {_shown(report.get('sdk_version'))}, "
                f"not of {self.server.name} on {self.run['sdk_version']}"
            )
        reasons = report.get("reasons", [])
        if not isinstance(reasons, list) or not all(
            isinstance(r, dict) and isinstance(r.get("reason"), str) for r in reasons
        ):
            raise ActionsError(f"the artifact is not a check report: {REPORT_FILE} has malformed reasons")
        if not isinstance(report.get("seconds", 0), int | float | None):
            raise ActionsError(f"the artifact is not a check report: {REPORT_FILE} has malformed seconds")
        try:  # a report of the watcher's own shape, of any version it reads (an older watcher's CI too)
            return load_report(report, REPORT_FILE)
        except ReportError as exc:
            raise ActionsError(f"the artifact is not a check report: {exc}") from exc


def _shown(value: object) -> str:
    """A value from a report, short enough for a reason."""
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


def read_token(loaded: LoadedConfig, settings: GitHubActionsExecutor, environ: dict[str, str]) -> str:
    path = loaded.resolve(settings.token_file) if settings.token_file else None
    try:
        value = vault.read_token(settings.token_env, path, environ)
    except OSError as exc:
        raise ActionsError(f"executor.token_file: cannot read {path}: {exc.strerror}") from exc
    if value:
        return value
    raise ActionsError(f"no GitHub token: set {settings.token_env or 'executor.token_file'}")


def run_on_actions(
    loaded: LoadedConfig,
    store: Store,
    run: RunRow,
    server: Server,
    settings: GitHubActionsExecutor,
    stop: threading.Event | None,
    *,
    transport: httpx.BaseTransport | None = None,
    wait: Callable[[float], None] = time.sleep,
    environ: dict[str, str] | None = None,
) -> RunReport:
    """The report of one run carried out on GitHub Actions (an error report when it could not be)."""
    started = time.monotonic()
    config = loaded.config
    follow: _Follow | None = None
    outcome: RunReport | str
    try:
        token = read_token(loaded, settings, dict(vault.environ() if environ is None else environ))
        with httpx.Client(transport=transport, trust_env=transport is None) as client:
            api = GitHubApi(settings.api_url, token, client, config.http_client, wait)
            api.stop, api.deadline = stop, started + settings.timeout_minutes * 60
            follow = _Follow(loaded, store, run, server, settings, stop, api)
            outcome = follow.report()
    except Interrupted:
        outcome = "interrupted while following the Actions run"
    except ActionsError as exc:
        outcome = str(exc)
    return finish_report(loaded, run, server, settings, follow, outcome, started)


def finish_report(
    loaded: LoadedConfig,
    run: RunRow,
    server: Server,
    settings: GitHubActionsExecutor,
    follow: _Follow | None,
    outcome: RunReport | str,
    started: float,
) -> RunReport:
    """The run's report (`outcome`: the artifact's report, or the reason it could not be had), with the
    Actions details and a link, written to this run's folder (with the artifact) as a local run's is."""
    config = loaded.config
    local_id = new_run_id(run["sdk_version"])
    server_runs = loaded.resolve(config.suites.runs_dir) / re.sub(r"[^A-Za-z0-9._-]", "_", server.name)
    run_dir = server_runs / local_id
    if isinstance(outcome, dict):
        report = outcome
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "artifact.zip").write_bytes(follow.zip_bytes if follow else b"")
    else:
        report = _error_report(loaded, run, server, outcome)
    report["executor"] = "github-actions"
    report["actions"] = follow.actions if follow else {"repo": settings.repo, "workflow": settings.workflow}
    if follow and report["verdict"] == ERROR and report.get("reasons"):
        link = follow.actions.get("html_url") or follow.link
        report["reasons"][-1]["reason"] += f" ({link})"
    report["remote_run_dir"] = report.get("run_dir")
    report["run_dir"] = str(run_dir)
    report.setdefault("run_id", local_id)
    report["seconds"] = report.get("seconds") if report["verdict"] != ERROR else round(time.monotonic() - started, 2)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / REPORT_FILE).write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    prune_runs(server_runs, config.suites.keep_runs)
    return report


def _error_report(loaded: LoadedConfig, run: RunRow, server: Server, reason: str) -> RunReport:
    return {
        "report_version": REPORT_VERSION,
        "server": server.name,
        "team": server.team,
        "sdk": server.sdk,
        "sdk_package": sdk_package_of(loaded.config, server),
        "sdk_version": run["sdk_version"],
        "baseline_sdk_version": server.baseline_sdk_version,
        "language": server.language,
        "verdict": ERROR,
        "reasons": [{"verdict": ERROR, "reason": f"GitHub Actions: {reason}"}],
        "install": None,
        "start": None,
        "conformance": [],
        "contract": None,
        "deprecation_warnings": [],
        "run_dir": None,
        "started_at": clock.now().isoformat(timespec="seconds").replace("+00:00", "Z"),
    }


Follow = _Follow
"""One run from dispatch to report (the fan-out drives many at once: watcher/suites/executors/fanout.py)."""

__all__ = ["ActionsError", "Follow", "finish_report", "read_token", "run_key", "run_on_actions"]
