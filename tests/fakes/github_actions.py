"""The GitHub Actions part of the fake GitHub (FakeGitHub.actions): dispatch, runs, artifacts, zip download.

    gh.actions.add_workflow("acme/books", "mcp-watcher.yml", plan=RunPlan(report={...}))
    # POST .../actions/workflows/mcp-watcher.yml/dispatches (inputs server, sdk_package, sdk_version,
    # run_key) starts a run titled like the shipped workflow's run-name; each GET of the run advances
    # it through plan.statuses; when completed it has the plan's artifacts.
    gh.actions.dispatches                       # the inputs of every accepted dispatch
    gh.actions.token = "ghp_…"                  # then a request without "Bearer <token>" answers 401/403
    gh.actions.accept_then_fail = [502]         # the next dispatch starts its run, then answers 502 anyway
    gh.actions.direct_download = True           # the zip from the API itself (200), not a redirect
    gh.actions.advance_on_list = True           # each list-runs answer also advances every run (a fan-out
                                                # follows runs by listing only); status=completed filters

Answers follow the recorded shapes in tests/fixtures/github_actions/.
"""

from __future__ import annotations

import copy
import io
import json
import threading
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "github_actions"
RUN_SHAPE = json.loads((FIXTURES / "workflow_run.json").read_text(encoding="utf-8"))
ARTIFACTS_SHAPE = json.loads((FIXTURES / "artifacts.json").read_text(encoding="utf-8"))


@dataclass
class RunPlan:
    statuses: list[str] = field(default_factory=lambda: ["queued", "in_progress", "completed"])
    conclusion: str = "success"
    report: dict[str, Any] | None = None
    """The report.json inside the artifact zip; None: no artifact."""
    artifact_bytes: bytes | None = None
    """A raw zip (or anything) instead of one built from `report`."""
    appear_after: int = 0
    """How many list-runs answers leave the run out first (GitHub lists a new run after a while)."""
    visible: bool = True


def zip_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@dataclass
class _Run:
    id: int
    repo: str
    workflow: str
    title: str
    plan: RunPlan
    step: int = 0
    listed: int = 0

    @property
    def status(self) -> str:
        return self.plan.statuses[min(self.step, len(self.plan.statuses) - 1)]


class FakeActions:
    def __init__(self, base: str) -> None:
        self.base = base
        self._lock = threading.Lock()
        self.workflows: dict[tuple[str, str], RunPlan] = {}
        self.runs: dict[int, _Run] = {}
        self.dispatches: list[dict[str, Any]] = []
        self.token: str | None = None
        self.accept_then_fail: list[int] = []
        self.direct_download = False
        self.advance_on_list = False
        self._next_id = 11750009000

    def add_workflow(self, repo: str, workflow: str, plan: RunPlan | None = None) -> None:
        with self._lock:
            self.workflows[(repo, workflow)] = plan or RunPlan()

    def add_decoy_run(self, repo: str, workflow: str, title: str) -> int:
        """Another dispatched run of the same workflow, started at the same time (must not be taken)."""
        with self._lock:
            return self._new_run(repo, workflow, title, RunPlan(statuses=["in_progress"])).id

    def _new_run(self, repo: str, workflow: str, title: str, plan: RunPlan) -> _Run:
        self._next_id += 1
        run = _Run(self._next_id, repo, workflow, title, plan)
        self.runs[run.id] = run
        return run

    def _run_json(self, run: _Run) -> dict[str, Any]:
        data = copy.deepcopy(RUN_SHAPE)
        api = f"{self.base}/repos/{run.repo}/actions/runs/{run.id}"
        data.update(
            id=run.id,
            display_title=run.title,
            status=run.status,
            conclusion=run.plan.conclusion if run.status == "completed" else None,
            path=f".github/workflows/{run.workflow}",
            url=api,
            html_url=f"https://github.com/{run.repo}/actions/runs/{run.id}",
            artifacts_url=f"{api}/artifacts",
        )
        return data

    def _artifact_zip(self, run: _Run) -> bytes | None:
        if run.plan.artifact_bytes is not None:
            return run.plan.artifact_bytes
        if run.plan.report is None:
            return None
        return zip_of({"report.json": json.dumps(run.plan.report).encode()})

    def route(self, method: str, repo: str, rest: list[str], query: dict[str, str], body: bytes, auth: str | None):
        """(status, json body or bytes, extra headers) for /repos/<repo>/actions/…; None: not ours."""
        if self.token is not None:
            if not auth:
                return 401, {"message": "Requires authentication"}, {}
            if auth != f"Bearer {self.token}":
                return 403, {"message": "Resource not accessible by personal access token"}, {}
        with self._lock:
            if method == "POST" and len(rest) == 4 and rest[1] == "workflows" and rest[3] == "dispatches":
                return self._dispatch(repo, rest[2], json.loads(body or b"{}"))
            if method != "GET":
                return 404, {"message": "Not Found"}, {}
            if rest == ["actions", "runs"]:
                return self._list_runs(repo, query)
            if len(rest) >= 3 and rest[1] == "runs" and rest[2].isdigit():
                run = self.runs.get(int(rest[2]))
                if run is None or run.repo != repo:
                    return 404, {"message": "Not Found"}, {}
                if len(rest) == 3:
                    run.step += 1
                    return 200, self._run_json(run), {}
                if rest[3:] == ["artifacts"]:
                    return 200, self._artifacts(run), {}
            if len(rest) == 4 and rest[1] == "artifacts" and rest[3] == "zip":
                run = self.runs.get(int(rest[2]))
                if run is None or self._artifact_zip(run) is None:
                    return 404, {"message": "Not Found"}, {}
                if self.direct_download:
                    return 200, self._artifact_zip(run), {}
                return 302, b"", {"Location": f"{self.base}/blob/artifacts/{run.id}.zip?sig=short-lived"}
        return 404, {"message": "Not Found"}, {}

    def blob(self, name: str) -> bytes | None:
        with self._lock:
            run = self.runs.get(int(name.removesuffix(".zip"))) if name.removesuffix(".zip").isdigit() else None
            return self._artifact_zip(run) if run else None

    def _dispatch(self, repo: str, workflow: str, payload: dict[str, Any]):
        plan = self.workflows.get((repo, workflow))
        if plan is None:
            return 404, {"message": "Not Found"}, {}
        inputs = payload.get("inputs") or {}
        missing = [k for k in ("server", "sdk_package", "sdk_version", "run_key") if k not in inputs]
        if missing or "ref" not in payload:
            return 422, {"message": f"Required input '{(missing or ['ref'])[0]}' not provided"}, {}
        self.dispatches.append(dict(inputs))
        title = f"mcp-watcher {inputs['server']} {inputs['sdk_package']} {inputs['sdk_version']} [{inputs['run_key']}]"
        self._new_run(repo, workflow, title, copy.deepcopy(plan))
        if self.accept_then_fail:
            return self.accept_then_fail.pop(0), {"message": "Server Error"}, {}
        return 204, b"", {}

    def _list_runs(self, repo: str, query: dict[str, str]):
        listed = []
        for run in sorted(self.runs.values(), key=lambda r: -r.id):
            if run.repo != repo or not run.plan.visible:
                continue
            run.listed += 1
            if run.listed <= run.plan.appear_after:
                continue
            if self.advance_on_list:
                run.step += 1
            if query.get("status") and run.status != query["status"]:
                continue
            listed.append(self._run_json(run))
        per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        shown = listed[(page - 1) * per_page : page * per_page]
        return 200, {"total_count": len(listed), "workflow_runs": shown}, {}

    def _artifacts(self, run: _Run) -> dict[str, Any]:
        if run.status != "completed" or self._artifact_zip(run) is None:
            return {"total_count": 0, "artifacts": []}
        data = copy.deepcopy(ARTIFACTS_SHAPE)
        [artifact] = data["artifacts"]
        api = f"{self.base}/repos/{run.repo}/actions/artifacts/{run.id}"
        artifact.update(id=run.id, url=api, archive_download_url=f"{api}/zip")
        artifact["size_in_bytes"] = len(self._artifact_zip(run) or b"")
        artifact["workflow_run"]["id"] = run.id
        return data
