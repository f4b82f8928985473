"""The judge stage's conformance step of a run: the pinned suite (installed once) against the started server, one
requirement set at a time, each result judged against the server's expected failures and marked on the run."""

from __future__ import annotations

import time

from watcher.boundary.process import ServerProcess
from watcher.core import progress
from watcher.core.errors import ConformanceError, ToolMissing
from watcher.suites.judge import conformance
from watcher.suites.state import ERROR, FAIL, RunState


def run_conformance(run: RunState, server: ServerProcess) -> None:
    revisions = run.server.requirements
    if not revisions:
        return
    reach = server.reach()
    if reach is None:
        run.report["conformance"] = [
            {"requirements": r, "skipped": "the conformance suite tests servers over HTTP only"} for r in revisions
        ]
        return
    settings = run.config.conformance
    began = time.monotonic()
    progress.stage(f"getting the conformance suite ({settings.package})")
    try:
        tool = conformance.ensure_conformance(
            settings.package,
            run.envs_dir / "_tools",
            boundary=run.sandbox,
            registry=settings.npm_registry,
            timeout=run.server.timeouts.install,
            secret_names=run.secret_names,
            cancel=run.cancel,
        )
    except (ConformanceError, ToolMissing) as exc:
        run.check_cancel()
        evidence = getattr(exc, "evidence", "")
        run.report["conformance"] = [{"requirements": r, "error": str(exc), "evidence": evidence} for r in revisions]
        run.report["conformance_tool"] = {
            "package": settings.package,
            "seconds": round(time.monotonic() - began, 2),
            "error": str(exc),
            "egress_refused": list(getattr(exc, "egress_refused", [])),
        }
        run.mark(ERROR, f"conformance suite unavailable: {exc}")
        return
    run.report["conformance_tool"] = {
        "package": tool.package,
        "version": tool.version,
        "seconds": round(time.monotonic() - began, 2),
        "egress_refused": list(tool.egress_refused),
    }
    configured = run.repo_path(run.server.expected_failures) if run.server.expected_failures else None
    configured_root = run.repo_root_of(run.server.expected_failures) if run.server.expected_failures else None
    for revision in revisions:
        run.check_cancel()
        baseline_path = conformance.expected_failures_path(configured, revision)
        progress.stage(f"conformance suite, requirement set {revision}")
        result = conformance.run_requirement_set(
            tool,
            server=reach,
            boundary=run.sandbox,
            revision=revision,
            baseline_path=baseline_path,
            out_dir=run.run_dir / "conformance" / revision,
            timeout=run.server.timeouts.suite,
            secret_names=run.secret_names,
            baseline_root=configured_root,
            cancel=run.cancel,
        )
        run.report["conformance"].append(result)
        run.check_cancel()
        if result.get("error"):
            run.mark(ERROR, f"conformance {revision}: {result['error']}")
        elif not result["ok"]:
            parts = []
            if result["unexpected_failures"]:
                parts.append(f"{len(result['unexpected_failures'])} unexpected failure(s)")
            if result["stale_entries"]:
                parts.append(f"{len(result['stale_entries'])} stale expected-failure entries")
            run.mark(FAIL, f"conformance {revision}: " + ", ".join(parts))
        if server.proc is not None and server.proc.poll() is not None:
            run.mark(FAIL, f"the server exited (code {server.proc.returncode}) during conformance {revision}")
            run.report.setdefault("server_exit", {"code": server.proc.returncode, "evidence": server.evidence()})
            return
