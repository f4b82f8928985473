"""The conformance suite: install the pinned package once, run it per requirement set, read checks.json.

A suite version is outside code like a beta SDK (readiness installs the newest one on purpose), so with the
sandbox on each install runs in a room (writable: its own folder; network: the registry only) and each run in
another (read-only: its install and Node; writable: its output folder; network: one forwarded port, to the
server under test). Neither sees the state folder, the config, a secret file or any other tool.

The verdict is computed from the files the suite writes (`-o DIR`: one folder per scenario with a
`checks.json`), not from its pretty stdout, with the suite's four exit rules against the server's
expected-failures file:

    fails + listed   -> expected failure (ok)      fails + unlisted -> unexpected failure (regression)
    passes + listed  -> stale entry (fail)         passes + unlisted -> pass

An entry names a whole scenario or one check as `scenario:check-id`; per-check entries are judged
per check (a listed check that is absent or skipped is tolerated). Only the scenarios a requirement
set scores are judged; the others (extension, added-after-release, pending) are reported apart.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from watcher.boundary import sandbox, toolchain
from watcher.boundary.launch import Launcher
from watcher.boundary.network import Forwarded, Reach
from watcher.boundary.process import CommandResult, run_command, scrubbed_env, tail
from watcher.core import untrusted
from watcher.core.errors import ConformanceError as ConformanceError
from watcher.core.errors import UntrustedInputError
from watcher.core.run_report import ConformanceResult, UnscoredScenario
from watcher.suites.build.env import locked, remove_env, seal
from watcher.suites.build.indexes import learn_urls, with_sources

FAILING = ("FAILURE", "WARNING")
_SEVERITY = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1}
_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)$")
REQUIREMENTS_PLACEHOLDER = "{requirements}"
TOOL_RECORD = "mcp-watcher-tool.json"
"""The installed suite's record in its folder: its package, version and what its install room's proxy refused."""
log = logging.getLogger(__name__)


# --- installing the pinned suite --------------------------------------------------------------------


@dataclass(frozen=True)
class ConformanceTool:
    package: str
    version: str
    root: Path
    """The installed package folder (holds dist/ and requirements/)."""
    egress_refused: tuple[dict[str, object], ...] = field(default=(), compare=False)
    """What the install room's egress proxy refused (or let through under `suites.egress: audit`) while this
    version was installed: kept in the tool's record, so every later use of the install reports it too."""

    @property
    def cli(self) -> Path:
        return self.root / "dist" / "index.js"

    @property
    def prefix(self) -> Path:
        """The install's own folder (the package and its dependencies, under node_modules/)."""
        return next(p.parent for p in self.root.parents if p.name == "node_modules")

    def requirements_file(self, revision: str) -> Path:
        return self.root / "requirements" / f"{revision}.yaml"

    def requirement_sets(self) -> list[str]:
        """The names of the `requirements/<set>.yaml` files the version ships (links among them too:
        reading one is then that set's refusal)."""
        folder = self.root / "requirements"
        names = (PurePosixPath(f).name for f in untrusted.files_under(self.prefix, folder))
        return sorted(n.removesuffix(".yaml") for n in names if n.endswith(".yaml"))


def split_package_spec(spec: str) -> tuple[str, str | None]:
    """'@scope/name@1.2.3' -> ('@scope/name', '1.2.3'); a spec without a version -> (name, None)."""
    at = spec.rfind("@")
    if at > 0:
        return spec[:at], spec[at + 1 :]
    return spec, None


def ensure_conformance(
    package: str,
    tools_dir: Path,
    *,
    boundary: sandbox.Sandbox,
    registry: str | None = None,
    timeout: float = 600,
    secret_names: set[str] | None = None,
    cancel: threading.Event | None = None,
) -> ConformanceTool:
    """Install the suite into `tools_dir` once (later calls reuse it). Raises ConformanceError.
    Its install scripts are code from a registry: with the sandbox on the install runs in a room (writable
    only its own folder, no route out but the watcher's egress proxy to the registry, a package cache of its
    own); a `boundary` that is refused installs nothing. What the proxy refused is in the tool's record
    (`ConformanceTool.egress_refused`), or in the ConformanceError of an install that failed."""
    if boundary.refused:
        raise ConformanceError(f"{package} was not installed: {boundary.reason}")
    boundary = with_sources(boundary)
    toolchain.check_node()
    name, version = split_package_spec(package)
    key = hashlib.sha256(json.dumps([package, registry]).encode()).hexdigest()[:12]
    prefix = tools_dir / f"conformance-{key}"
    root = prefix / "node_modules" / name
    marker = prefix / TOOL_RECORD
    with locked(prefix.with_name(prefix.name + ".lock")):
        if marker.exists():
            record = json.loads(marker.read_text())
            refused = [r for r in record.get("egress_refused") or [] if isinstance(r, dict)]
            return ConformanceTool(package, record["version"], root, tuple(refused))
        remove_env(prefix)  # a failed install's leftovers (its scripts may have left links) go first
        prefix.mkdir(parents=True, exist_ok=True)
        (prefix / "package.json").write_text('{"name": "mcp-watcher-tools", "private": true}\n', encoding="utf-8")
        command = [*toolchain.npm_command(), "install", "--no-audit", "--no-fund", "--no-update-notifier", package]
        if registry:
            command += ["--registry", registry]
        env = scrubbed_env(
            secret_names=secret_names or set(), installer=True, path_prepend=[toolchain.node_bin_dir()]
        ).env
        if registry:
            env["npm_config_registry"] = registry  # (the install room's proxy allows the indexes the env names)
        if boundary.active:
            boundary.hand_over(prefix)
            env["TMPDIR"] = "/tmp"
            env["npm_config_cache"] = str(prefix / ".cache")
        (prefix / "install.log").touch()  # bound read-only in place: the room cannot swap it for a link
        launcher = boundary.room(
            readable=[toolchain.node_root(), *sandbox.local_package_sources()],
            writable=[prefix],
            # Through the proxy, a registry on the host's loopback too (a mirror, the tests' fake): every other
            # request of the install's scripts is then refused and recorded, not only stopped by the kernel.
            network="registry",
            protected=[prefix / "install.log"],
            audit_as=("conformance suite", "npm install"),
            learn_from=learn_urls("typescript", name, env, boundary.index_sources() if boundary.active else ()),
        )
        run = run_command(
            command,
            cwd=prefix,
            env=env,
            timeout=timeout,
            log_path=prefix / "install.log",
            cancel=cancel,
            launcher=launcher,
        )
        refused = [refusal.as_dict() for refusal in launcher.refusals()]
        if refused:
            log.warning("installing %s: the egress proxy %s", package, describe_refused(refused))
        shutil.rmtree(prefix / ".cache", ignore_errors=True)
        if not run.ok:
            said = "".join(f"\negress proxy: {text}" for text in launcher.egress_failures()[-5:])
            raise ConformanceError(f"installing {package} failed ({run.describe()})", run.tail + said, refused)
        installed = _installed_version(prefix, root, package, refused)
        if version and installed != version:
            raise ConformanceError(f"npm installed {name} {installed}, not the pinned {version}", "", refused)
        if boundary.active:
            seal(prefix)  # the room's user installed it; nothing of a run may change it afterwards
        marker.unlink(missing_ok=True)  # whatever the install put there (a link would be followed)
        record = {"package": package, "version": installed, "egress_refused": refused}
        marker.write_text(json.dumps(record), encoding="utf-8")
        return ConformanceTool(package, installed, root, tuple(refused))


def describe_refused(refused: list[dict[str, object]]) -> str:
    """One line for the log: how many requests the proxy refused (or recorded under audit), and which."""
    audit = any(r.get("let_through") for r in refused)
    shown = sorted({f"{r.get('host')}:{r.get('port')} ({r.get('rule')})" for r in refused})
    return f"{'recorded (audit)' if audit else 'refused'} {len(refused)} request(s): {', '.join(shown[:5])}"


def _installed_version(prefix: Path, root: Path, package: str, refused: list[dict[str, object]]) -> str:
    """The version in the installed package.json, read through the loader for outside files: a plain file
    inside the install, no link followed (the install's scripts could have made it, or a folder on the way, a
    link to a file of the host's)."""
    try:
        manifest = untrusted.load_json(prefix, root / "package.json", limits=untrusted.SUITE_MANIFEST, expect=dict)
        version = manifest["version"]
    except (UntrustedInputError, KeyError) as exc:
        raise ConformanceError(f"installing {package} left no readable package.json: {exc}", "", refused) from exc
    if not isinstance(version, str):
        raise ConformanceError(f"installing {package} left a package.json whose version is not a string", "", refused)
    return version


# --- requirement sets and the expected-failures file ----------------------------------------------


@dataclass(frozen=True)
class RequirementSet:
    revision: str
    scored: tuple[str, ...]
    not_scored: Mapping[str, str]
    """Scenario -> why it runs without being scored (extension, added-after-release, pending)."""


def load_requirement_set(tool: ConformanceTool, revision: str) -> RequirementSet:
    """The set's scored server scenarios; a file that is missing, a link, too large, an alias or of the
    wrong shape is a ConformanceError naming the file and line."""
    path = tool.requirements_file(revision)
    try:
        if not untrusted.exists_under(tool.prefix, path):
            raise ConformanceError(
                f"{tool.package} has no requirement set {revision!r}; it knows {tool.requirement_sets()}"
            )
        data, lines = untrusted.load_yaml(
            tool.prefix, path, limits=untrusted.REQUIREMENT_SET, expect=dict, shape="a mapping with a `server` list"
        )
    except UntrustedInputError as exc:
        raise ConformanceError(f"{tool.package}@{tool.version}: requirement set {revision!r}: {exc}") from None
    for key in ("server", "not_scored"):
        if data.get(key) is not None and not isinstance(data[key], list):
            raise ConformanceError(f"{path}:{lines.get((key,), 1)}: {key}: expected a list")
    not_scored = {
        str(item["scenario"]): str(item.get("reason", "not scored"))
        for item in data.get("not_scored") or []
        if isinstance(item, dict) and item.get("leg", "server") == "server" and item.get("scenario")
    }
    scored = tuple(str(s) for s in data.get("server") or [] if isinstance(s, str | int | float) and str(s))
    return RequirementSet(revision, scored, not_scored)


@dataclass(frozen=True)
class Baseline:
    """The server entries of an expected-failures file."""

    path: Path | None
    scenarios: frozenset[str] = frozenset()
    checks: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def entries(self) -> list[str]:
        out = sorted(self.scenarios)
        out += sorted(f"{s}:{c}" for s, ids in self.checks.items() for c in ids)
        return out


def expected_failures_path(configured: Path | None, revision: str) -> Path | None:
    """The file for one requirement set: a configured path may hold `{requirements}` for per-set files."""
    if configured is None:
        return None
    return Path(str(configured).replace(REQUIREMENTS_PLACEHOLDER, revision))


def load_baseline(path: Path | None, root: Path | None = None) -> Baseline:
    """Read and check an expected-failures file; errors name the file, line and entry. With `root` (the
    checked-out repository) the file is reached without following a link."""
    if path is None:
        return Baseline(None)
    try:
        data, lines = untrusted.load_yaml(
            root,
            path,
            limits=untrusted.EXPECTED_FAILURES,
            expect=dict,
            shape="a mapping with 'server' and/or 'client'",
        )
    except UntrustedInputError as exc:
        raise ConformanceError(str(exc)) from None
    entries = data.get("server")
    if entries is None or entries == "":
        return Baseline(path)
    if not isinstance(entries, list):
        raise ConformanceError(f"{path}:{lines.get(('server',), 1)}: server: expected a list of scenario names")
    scenarios: set[str] = set()
    checks: dict[str, set[str]] = {}
    where: dict[str, int] = {}
    for index, item in enumerate(entries):
        line = lines.get(("server", index), 1)
        if not isinstance(item, str | int | float) or isinstance(item, bool) or not str(item).strip():
            hint = " (write '- scenario:check-id' with no space after the colon)" if isinstance(item, dict) else ""
            raise ConformanceError(
                f"{path}:{line}: server: each entry is '<scenario>' or '<scenario>:<check-id>'{hint}"
            )
        entry = str(item).strip()
        scenario, sep, check = entry.partition(":")
        if sep and (not scenario or not check):
            raise ConformanceError(f"{path}:{line}: server: {entry!r}: both sides of the colon are required")
        if sep:
            checks.setdefault(scenario, set()).add(check)
        else:
            scenarios.add(scenario)
        where.setdefault(scenario, line)
    for scenario in scenarios & set(checks):
        raise ConformanceError(
            f"{path}:{where[scenario]}: server: {scenario!r} is listed whole and per check; keep one or the other"
        )
    return Baseline(path, frozenset(scenarios), {s: frozenset(ids) for s, ids in checks.items()})


# --- reading results and applying the exit rules ----------------------------------------------------


def collect_checks(out_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Scenario -> its checks, from the `checks.json` files under `out_dir` (latest folder wins). The suite
    wrote them: each is read without following a link, capped, and a refused one is a failing check."""
    found: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    try:
        written = untrusted.files_under(out_dir)
    except UntrustedInputError:  # the results folder itself replaced by a link: no results are read
        return {}
    for relative in written:
        rel = PurePosixPath(relative)
        if rel.name != "checks.json":
            continue
        match = _RESULT_DIR.match(rel.parent.as_posix())
        if not match:
            continue
        scenario, stamp = match["scenario"], match["stamp"]
        try:
            checks = untrusted.load_json(out_dir, relative, limits=untrusted.CHECKS, name=relative, expect=list)
        except UntrustedInputError as exc:
            checks = [_synthetic(scenario, f"unreadable checks.json: {exc}")]
        if scenario not in found or stamp >= found[scenario][0]:
            found[scenario] = (stamp, [c for c in checks if isinstance(c, dict)])
    return {scenario: checks for scenario, (_, checks) in found.items()}


def _synthetic(scenario: str, message: str) -> dict[str, Any]:
    return {"id": scenario, "status": "FAILURE", "errorMessage": message}


def collapse(checks: list[dict[str, Any]]) -> dict[str, str]:
    """Check id -> one status, most severe occurrence first (INFO never decides)."""
    out: dict[str, str] = {}
    for check in checks:
        status = str(check.get("status"))
        if status == "INFO":
            continue
        cid = str(check.get("id"))
        if cid not in out or _SEVERITY.get(status, 0) >= _SEVERITY.get(out[cid], 0):
            out[cid] = status
    return out


def _failing(checks: list[dict[str, Any]], statuses: tuple[str, ...] = FAILING) -> bool:
    return any(c.get("status") in statuses for c in checks)


def evaluate(
    results: Mapping[str, list[dict[str, Any]]], requirement_set: RequirementSet, baseline: Baseline
) -> ConformanceResult:
    """The four exit rules, per scenario or per check, over the scenarios the set scores."""
    expected: list[str] = []
    unexpected: list[str] = []
    stale: list[str] = []
    failures: dict[str, str] = {}
    passed = failed = 0
    missing: list[str] = []
    check_counts = {"SUCCESS": 0, "FAILURE": 0, "WARNING": 0, "SKIPPED": 0, "INFO": 0}
    # Without a baseline the suite fails a set on FAILURE only; with one, a WARNING counts too.
    failing_statuses = FAILING if baseline.path is not None else ("FAILURE",)
    for scenario in requirement_set.scored:
        checks = results.get(scenario)
        if checks is None:
            missing.append(scenario)
            checks = [_synthetic(scenario, "the suite wrote no results for this scenario")]
        for check in checks:
            status = str(check.get("status"))
            check_counts[status] = check_counts.get(status, 0) + 1
        failing = _failing(checks, failing_statuses)
        passed, failed = passed + (not failing), failed + failing
        if scenario in baseline.scenarios:
            (expected if failing else stale).append(scenario)
            continue
        listed = baseline.checks.get(scenario)
        if not listed:
            if failing:
                unexpected.append(scenario)
                failures[scenario] = _first_error(checks)
            continue
        statuses = collapse(checks)
        for cid, status in statuses.items():
            if status in FAILING:
                ident = f"{scenario}:{cid}"
                if cid in listed:
                    expected.append(ident)
                else:
                    unexpected.append(ident)
                    failures[ident] = _first_error([c for c in checks if c.get("id") == cid])
        stale += [f"{scenario}:{cid}" for cid in sorted(listed) if statuses.get(cid) == "SUCCESS"]
    unscored: list[UnscoredScenario] = []
    for scenario, checks in sorted(results.items()):
        if scenario in requirement_set.scored:
            continue
        failing_ids = sorted({str(c.get("id")) for c in checks if c.get("status") in FAILING})
        unscored.append(
            {
                "scenario": scenario,
                "reason": requirement_set.not_scored.get(scenario, "not scored"),
                "passed": not failing_ids,
                "failing_checks": failing_ids,
            }
        )
    return {
        "requirements": requirement_set.revision,
        "scenarios": len(requirement_set.scored),
        "passed": passed,
        "failed": failed,
        "checks": check_counts,
        "expected_failures": expected,
        "unexpected_failures": unexpected,
        "stale_entries": stale,
        "failure_messages": failures,
        "missing": missing,
        "unscored": unscored,
        "ok": not unexpected and not stale,
    }


def _first_error(checks: list[dict[str, Any]]) -> str:
    for check in checks:
        if check.get("status") in FAILING:
            message = str(check.get("errorMessage") or check.get("description") or check.get("status"))
            return f"{check.get('id')}: {message}"[:300]
    return ""


# --- one run of one requirement set -------------------------------------------------------------


def suite_room(
    tool: ConformanceTool, boundary: sandbox.Sandbox, server: Reach, results_dir: Path, inputs: list[Path]
) -> tuple[Launcher, str]:
    """Where one run of the suite happens and the URL it is given. With the sandbox on: a room that reads its
    install, Node and its `inputs`, writes only `results_dir`, and whose one way out is the server's own port,
    forwarded to the server (so the Host header is the one the server expects). Else the host, as today."""
    launcher = boundary.room(
        readable=[tool.prefix, toolchain.node_root(), *inputs],
        writable=[results_dir],
        network=Forwarded(server.port, server.endpoint()),
    )
    if boundary.active:
        boundary.hand_over(results_dir)
        return launcher, server.url_in_room()
    return launcher, server.url


def write_expected_failures_input(baseline: Baseline, path: Path) -> Path:
    """The entries the watcher judges with, as the file the suite's `--expected-failures` reads (what a room
    is given instead of the server's own file: nothing else of the host, whatever the configured path is)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"server": baseline.entries}, sort_keys=False), encoding="utf-8")
    return path


def invoke_suite(
    tool: ConformanceTool,
    *,
    server: Reach,
    boundary: sandbox.Sandbox,
    arguments: list[str],
    out_dir: Path,
    timeout: float,
    secret_names: set[str],
    cancel: threading.Event | None = None,
    expected_failures: Baseline | None = None,
) -> tuple[CommandResult, Path]:
    """The suite's CLI against `server` with these arguments (which set) and `expected_failures`, its results in
    ``out_dir/results`` and its output in ``out_dir``'s stderr.log and stdout.log (outside its room), in a
    scrubbed environment. Raises ConformanceError when a room is asked for and cannot be had."""
    if boundary.refused:
        raise ConformanceError(f"the conformance suite was not run: {boundary.reason}")
    results_dir = out_dir / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    inputs: list[Path] = []
    extra: list[str] = []
    if expected_failures is not None and expected_failures.path is not None:
        given = write_expected_failures_input(expected_failures, out_dir / "input" / "expected-failures.yml")
        inputs.append(given.parent)
        extra = ["--expected-failures", str(given)]
    launcher, url = suite_room(tool, boundary, server, results_dir, inputs)
    command = [toolchain.node(), str(tool.cli), "server", "--url", url, *arguments, *extra, "-o", str(results_dir)]
    env = scrubbed_env(secret_names=secret_names, path_prepend=[toolchain.node_bin_dir()]).env
    run = run_command(
        command,
        cwd=results_dir,
        env=env,
        timeout=timeout,
        log_path=out_dir / "stderr.log",
        stdout_path=out_dir / "stdout.log",
        cancel=cancel,
        launcher=launcher,
    )
    return run, results_dir


def run_requirement_set(
    tool: ConformanceTool,
    *,
    server: Reach,
    boundary: sandbox.Sandbox,
    revision: str,
    baseline_path: Path | None,
    out_dir: Path,
    timeout: float,
    secret_names: set[str],
    cancel: threading.Event | None = None,
    baseline_root: Path | None = None,
) -> ConformanceResult:
    """Run the suite for one requirement set against `server` and judge its checks.json files.

    Returns the set's report; `error` is set (and the counts are absent) when the suite itself
    could not produce a judgement (bad baseline, no room to be had, timeout, crash without results).
    """
    started = time.monotonic()
    report: ConformanceResult = {"requirements": revision, "expected_failures_file": str(baseline_path or "")}
    try:
        requirement_set = load_requirement_set(tool, revision)
        baseline = load_baseline(baseline_path, baseline_root)
        run, results_dir = invoke_suite(
            tool,
            server=server,
            boundary=boundary,
            arguments=["--requirements", revision],
            out_dir=out_dir,
            timeout=timeout,
            secret_names=secret_names,
            cancel=cancel,
            expected_failures=baseline,
        )
    except ConformanceError as exc:
        report["error"], report["evidence"] = str(exc), exc.evidence
        report["seconds"] = round(time.monotonic() - started, 2)
        return report
    report["cli_exit_code"] = run.returncode
    report["seconds"] = round(run.seconds, 2)
    report["room"] = run.where
    if run.timed_out or run.cancelled:
        report["error"], report["evidence"] = f"the conformance suite {run.describe()}", tail(out_dir / "stdout.log")
        return report
    results = collect_checks(results_dir)
    if not results:
        evidence = "\n".join(x for x in (tail(out_dir / "stderr.log"), tail(out_dir / "stdout.log")) if x)
        report["error"] = f"the conformance suite wrote no results ({run.describe()})"
        report["evidence"] = evidence
        return report
    report.update(evaluate(results, requirement_set, baseline))
    report["baseline_entries"] = len(baseline.entries)
    # The suite's own exit code follows the same rules; a disagreement is worth seeing in the report.
    report["agrees_with_cli"] = (run.returncode == 0) == report["ok"]
    return report
