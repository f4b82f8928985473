"""When the service runs an evaluation: after a suite run whose contract diff has changes that affect models,
for a server that declares an evaluation. Other servers get a note in the suite result instead."""

from __future__ import annotations

import threading
from pathlib import Path

from watcher.config import LoadedConfig
from watcher.core import vault
from watcher.core.errors import ConfigError
from watcher.core.run_report import RunReport
from watcher.evaluation.report import EvaluationReport
from watcher.evaluation.run import REPORT_FILE, SKIPPED, run_evaluation, skipped_note


def model_changes(report: RunReport) -> int:
    contract = report.get("contract") or {}
    if not isinstance(contract, dict) or contract.get("error"):
        return 0
    return sum(1 for change in contract.get("changes") or [] if change.get("affectsModels"))


def after_suite_run(
    loaded: LoadedConfig, report: RunReport, cancel: threading.Event | None = None
) -> EvaluationReport | None:
    """Run the evaluation a suite run calls for; returns its report (None when none ran).

    Adds `evaluation` to the suite report: what ran, or why nothing did.
    """
    changes = model_changes(report)
    if not changes:
        return None
    try:
        server = loaded.config.server(report["server"])
    except ConfigError:
        return None
    if server.evaluation is None:
        report["evaluation"] = {
            "status": "not_declared",
            "note": f"no evaluation set declared: {changes} change(s) affect models, and nothing measured how "
            f"models react (declare servers[].evaluation for {server.name})",
        }
        return None
    if not vault.environ().get(server.evaluation.key_env()):
        report["evaluation"] = {
            "status": SKIPPED,
            "note": f"{changes} change(s) affect models; evaluation " + skipped_note(server.evaluation),
        }
        return None
    stored_dir = report.get("run_dir")
    run_dir = Path(stored_dir) if stored_dir else None
    result = run_evaluation(loaded, server.name, report["sdk_version"], cancel=cancel, run_dir=run_dir)
    report["evaluation"] = {
        "status": "ran",
        "verdict": result["verdict"],
        "regressed_tasks": result.get("regressed_tasks") or [],
        "report": str(Path(result["run_dir"]) / REPORT_FILE),
        "note": f"{changes} change(s) affect models: model evaluation {result['verdict'].replace('_', ' ')}",
    }
    return result
