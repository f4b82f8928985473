"""The fingerprint of why a result failed: the first rule of `RULES` that applies to the report makes the
signature, from normalised text (`normalise.py`), so two servers failing the same way share it. Each rule is
named and documented in one line (docs/clusters.md lists them); the same report always gets the same key."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from watcher.clusters.normalise import normalise
from watcher.clusters.pytrace import Traceback, last_traceback
from watcher.core.contract_doc import ContractChange
from watcher.core.run_report import RunReport

SDK_FRAMES = 3
"""How many of the last frames inside the SDK a traceback's signature keeps."""
_IMPORT_TYPES = {"ModuleNotFoundError", "ImportError"}
_NO_MODULE = re.compile(r"No module named '(?P<name>[^']+)'")
_CANNOT_IMPORT = re.compile(r"cannot import name '(?P<name>[^']+)' from '(?P<module>[^']+)'")
_NODE_MISSING = re.compile(r"Cannot find (?:module|package) '(?P<name>[^']+)'")
_FROM_IMPORT = re.compile(r"^from\s+[\w.]+\s+import\s+\(?(?P<names>[\w\s,]+)\)?")
_QUOTED = re.compile(r"'([A-Za-z_][\w.]{3,})'")


@dataclass(frozen=True)
class Signature:
    key: str
    """16 hex digits of the SHA-256 of the rule and its parts: the cluster's identity within an SDK version."""
    rule: str
    parts: tuple[str, ...]
    """The normalised lines the key is made of, as shown."""
    summary: str
    """One line for a person: the exception and message, or the scenarios, or the contract rule."""
    trace: str
    """The normalised trace (the SDK's frames and the exception) or the failing ids: the example of the cluster."""
    symbols: tuple[str, ...]
    """Names to look for in the release notes: the module that failed to import, the names imported from it, the
    SDK functions in the trace, the scenario ids."""
    reproduction: str
    """The smallest failing reproduction the watcher has: the import that fails, or the conformance scenarios."""


@dataclass(frozen=True)
class Facts:
    """What a rule reads of one report."""

    report: RunReport
    sdk_module: str
    """The SDK's top-level import name (`mcp`): frames under site-packages/<it>/ are the SDK's."""
    evidence: str
    traceback: Traceback | None


Rule = Callable[[Facts], Signature | None]


def _make(rule: str, parts: list[str], summary: str, trace: str, symbols: list[str], reproduction: str) -> Signature:
    digest = hashlib.sha256("\n".join([rule, *parts]).encode("utf-8")).hexdigest()[:16]
    unique = tuple(dict.fromkeys(s for s in symbols if s))
    return Signature(digest, rule, tuple(parts), summary, trace, unique, reproduction)


def _failed_name(message: str) -> str | None:
    if found := _CANNOT_IMPORT.search(message):
        return f"{found.group('module')}.{found.group('name')}"
    if found := _NO_MODULE.search(message) or _NODE_MISSING.search(message):
        return found.group("name")
    return None


def _imported_names(code: str) -> list[str]:
    found = _FROM_IMPORT.match(code)
    return [n.strip() for n in found.group("names").split(",") if n.strip()] if found else []


def import_failure(facts: Facts) -> Signature | None:
    """An import that fails before any SDK frame runs: exception type, normalised message and the name that failed."""
    trace = facts.traceback
    if trace is not None:
        if trace.exception not in _IMPORT_TYPES or any(f.in_package(facts.sdk_module) for f in trace.frames):
            return None
        exception, message = trace.exception, trace.message
        code = trace.frames[-1].code if trace.frames else ""
    else:  # Node's loader says it without a Python traceback
        found = _NODE_MISSING.search(facts.evidence)
        if not found:
            return None
        exception, message, code = "ModuleNotFound", found.group(0), ""
    name = _failed_name(message)
    if name is None:
        return None
    line = f"{exception}: {normalise(message)}"
    symbols = [name, name.rpartition(".")[2], *_imported_names(code)]
    reproduction = code if code.startswith(("from ", "import ")) else f"import {name}"
    return _make("import_failure", [line, f"failed name: {name}"], line, line, symbols, reproduction)


def sdk_frames(facts: Facts) -> Signature | None:
    """A traceback through the SDK: exception type, normalised message and its last frames inside the SDK."""
    trace = facts.traceback
    if trace is None:
        return None
    inside = [f for f in trace.frames if f.in_package(facts.sdk_module)]
    if not inside:
        return None
    frames = [f"{f.installed_path()} in {f.func}" for f in inside[-SDK_FRAMES:]]
    line = f"{trace.exception}: {normalise(trace.message)}"
    shown = "\n".join([*(f"  {frame}" for frame in frames), line])
    symbols = [f.func for f in inside[-SDK_FRAMES:]] + _QUOTED.findall(trace.message)
    outer = trace.frames[-len(inside) - 1].code if len(trace.frames) > len(inside) else ""
    return _make("sdk_frames", [*frames, line], line, shown, symbols, outer or line)


def own_traceback(facts: Facts) -> Signature | None:
    """A traceback with no frame in the SDK: exception type, normalised message and the last frame's file and
    function, so two teams' own bugs with the same message stay apart."""
    trace = facts.traceback
    if trace is None:
        return None
    last = trace.frames[-1] if trace.frames else None
    where = f"{last.path.rpartition('/')[2]} in {last.func}" if last else "no frame"
    line = f"{trace.exception}: {normalise(trace.message)}"
    return _make("own_traceback", [line, where], line, f"  {where}\n{line}", [], line)


def _failing_step(report: RunReport) -> tuple[str, str, str] | None:
    """The first step that failed (install, start, then the server exiting while tested): its name, its error
    and its evidence (the output it left, then the start's stderr log)."""
    install, start, server_exit = report.get("install"), report.get("start"), report.get("server_exit")
    if install and not install.get("ok"):
        return "install", str(install.get("error") or ""), str(install.get("evidence") or "")
    if start and not start.get("ok"):
        evidence = "\n".join(str(v) for v in (start.get("evidence"), start.get("stderr")) if v)
        return "start", str(start.get("error") or ""), evidence
    if server_exit:  # its code and evidence say what happened; it carries no error of its own
        return "server_exit", "", str(server_exit.get("evidence") or "")
    return None


def step_failure(facts: Facts) -> Signature | None:
    """An install or start that failed with no traceback: the step and its normalised error (last evidence line)."""
    failing = _failing_step(facts.report)
    if failing is None:
        return None
    step, error_text, _ = failing
    error = normalise(error_text)
    lines = [line for line in facts.evidence.splitlines() if line.strip() and not line.startswith("---")]
    last = normalise(lines[-1]) if lines else ""
    parts = [f"{step}: {error}"] + ([f"last line: {last}"] if last else [])
    return _make("step_failure", parts, parts[0], "\n".join(parts), [], parts[0])


def conformance_failures(facts: Facts) -> Signature | None:
    """Conformance failures: each requirement set's unexpected failures (scenario ids and check ids), sorted."""
    parts = [
        f"conformance {entry.get('requirements')}: {ident}"
        for entry in facts.report.get("conformance") or []
        for ident in sorted(str(i) for i in entry.get("unexpected_failures") or [])
    ]
    if not parts:
        return None
    ids = [p.partition(": ")[2] for p in parts]
    scenarios = list(dict.fromkeys(i.partition(":")[0] for i in ids))
    checks = [i.partition(":")[2] for i in ids if ":" in i]
    summary = f"{len(ids)} conformance failure{'s' if len(ids) != 1 else ''}: {', '.join(ids[:3])}"
    reproduction = "conformance scenario" + ("s " if len(scenarios) > 1 else " ") + ", ".join(scenarios)
    return _make("conformance_failures", parts, summary, "\n".join(parts), scenarios + checks, reproduction)


def _shape(change: ContractChange) -> str:
    """Where a change is, with the item's own name and numbers taken out: `any tools item at inputSchema.<n>`."""
    name, path = str(change.get("name") or ""), str(change.get("path") or "")
    if name:
        path = path.replace(name, "*")
    path = re.sub(r"\d+", "#", path)
    return f"any {change.get('list') or 'item'} item" + (f" at {path}" if path and path != "*" else "")


def contract_breaks(facts: Facts) -> Signature | None:
    """Contract changes that break clients: each change's rule and the shape of the item (any tool, at a path)."""
    contract = facts.report.get("contract")
    changes = contract.get("changes") if isinstance(contract, dict) else None
    parts = sorted(
        {f"{c.get('rule') or c.get('kind')} on {_shape(c)}" for c in changes or [] if c.get("breaksClients")}
    )
    if not parts:
        return None
    return _make("contract_breaks", parts, f"contract: {parts[0]}", "\n".join(parts), [], "the contract snapshot")


def reason_text(facts: Facts) -> Signature | None:
    """Anything else: the run's reasons (why it failed or could not be checked), normalised."""
    reasons = [normalise(str(r.get("reason"))) for r in facts.report.get("reasons") or [] if r.get("verdict") != "pass"]
    if not reasons:
        return None
    return _make("reason_text", reasons, reasons[0], "\n".join(reasons), [], reasons[0])


RULES: tuple[tuple[str, Rule], ...] = (
    ("import_failure", import_failure),
    ("sdk_frames", sdk_frames),
    ("own_traceback", own_traceback),
    ("step_failure", step_failure),
    ("conformance_failures", conformance_failures),
    ("contract_breaks", contract_breaks),
    ("reason_text", reason_text),
)
"""In order: the first rule that applies makes the signature."""


def _evidence(report: RunReport) -> str:
    failing = _failing_step(report)
    return "" if failing is None else failing[2]


def sdk_module(package: str) -> str:
    """The import name of an SDK package: `mcp` for mcp, `modelcontextprotocol/sdk` for @modelcontextprotocol/sdk."""
    return package.lstrip("@").replace("-", "_").lower()


def signature_of(report: RunReport, package: str) -> Signature | None:
    """The signature of a failing or erroring report (None for a pass); `package` is the SDK's package name."""
    if report.get("verdict") not in ("fail", "error"):
        return None
    evidence = _evidence(report)
    facts = Facts(report, sdk_module(package), evidence, last_traceback(evidence) if evidence else None)
    for _, rule in RULES:
        signature = rule(facts)
        if signature is not None:
            return signature
    return _make("unexplained", ["no reason recorded"], "no reason recorded", "", [], "")
