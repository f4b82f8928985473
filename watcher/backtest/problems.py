"""What one suite report says is wrong, as problems a backtest can follow from version to version.

A problem has a kind (install, start, conformance, contract, deprecation) and a key that stays the same
across versions (the conformance check, the contract rule and path, the warning's text), so "first seen at"
means the same problem. A kind is *judged* only when the run got far enough to see it: a version that
does not install says nothing about its contract, and is neutral for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from watcher.core.run_report import DeprecationNotice, RunReport

KINDS = ("install", "start", "conformance", "contract", "deprecation")


@dataclass(frozen=True)
class Problem:
    kind: str
    key: str
    """Stable across versions: `start`, `2026-07-28:tools-call`, `error_code_changed:unknown_resource.code`."""
    text: str
    """What it means, completing "would have told you …"."""
    evidence: str = ""


@dataclass(frozen=True)
class Judgement:
    problems: list[Problem] = field(default_factory=list)
    judged: list[str] = field(default_factory=list)
    """The kinds this run could judge."""


def _last_line(text: str | None) -> str:
    lines = [line.strip() for line in str(text or "").splitlines() if line.strip() and not line.startswith("---")]
    return lines[-1][:300] if lines else ""


def _warnings(report: RunReport) -> dict[str, DeprecationNotice]:
    return {f"{w.get('kind')}: {w.get('message')}": w for w in report.get("deprecation_warnings") or []}


def judge(report: RunReport, reference: RunReport | None) -> Judgement:
    """The problems of one run. `reference` is the run of the release the team was on when this version
    appeared (the latest final before it); its deprecation warnings are not new. No reference: warnings
    are not judged."""
    problems: list[Problem] = []
    judged: list[str] = []
    package = report.get("sdk_package") or "the SDK"
    install = report.get("install")
    if install is not None and install.get("watcher_fault"):
        return Judgement(problems, judged)  # the watcher could not install it: nothing known of this version
    if install is not None:
        judged.append("install")
        if not install.get("ok"):
            problems.append(
                Problem("install", "install", f"{package} no longer installs", _last_line(install.get("error")))
            )
            return Judgement(problems, judged)
    start = report.get("start")
    if start is None:
        return Judgement(problems, judged)
    judged.append("start")
    if not start.get("ok"):
        problems.append(Problem("start", "start", "the server no longer starts", _last_line(start.get("evidence"))))
    elif report.get("server_exit"):
        exit_ = report["server_exit"]
        problems.append(
            Problem("start", "exit", "the server exits while it is tested", _last_line(exit_.get("evidence")))
        )
    if reference is not None:
        judged.append("deprecation")
        before = _warnings(reference)
        for key, warning in _warnings(report).items():
            if key not in before:
                problems.append(Problem("deprecation", key, f"a new SDK deprecation warning: {warning.get('message')}"))
    if not start.get("ok"):
        return Judgement(problems, judged)
    sets = report.get("conformance") or []
    if sets and not any(s.get("error") or s.get("skipped") for s in sets):
        judged.append("conformance")
        for entry in sets:
            revision = entry.get("requirements")
            for failure in entry.get("unexpected_failures") or []:
                problems.append(
                    Problem("conformance", f"{revision}:{failure}", f"conformance {revision}: {failure} now fails")
                )
    contract = report.get("contract")
    if isinstance(contract, dict):
        error = str(contract.get("error") or "")
        if error.startswith("snapshot under"):
            judged.append("contract")
            problems.append(Problem("contract", "snapshot", "no contract snapshot can be taken", error[:300]))
        elif not error:
            judged.append("contract")
            for change in contract.get("changes") or []:
                if change.get("breaksClients"):
                    where = change.get("path") or change.get("name") or ""
                    rule = change.get("rule") or change.get("kind") or "change"
                    problems.append(
                        Problem(
                            "contract",
                            f"{rule}:{where}",
                            f"a change that breaks clients: {rule} at {where}",
                            f"{change.get('before')!r} → {change.get('after')!r}",
                        )
                    )
    return Judgement(problems, judged)
