"""One paired evaluation of a configured server: both SDK versions built and started, tasks run, compared.

Never raises for an outside failure: a missing key, a version that will not install or start, a
provider that refuses, a server that dies — each is a report with verdict "error" (or a partial
result) that says what was not measured. The report never holds the API key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

from watcher.boundary.process import ServerProcess, free_port, scrubbed_env
from watcher.config import LoadedConfig, secret_env_names
from watcher.core import progress, vault
from watcher.core.errors import ConfigError
from watcher.core.secret_policy import mask
from watcher.evaluation.compare import ERROR, compare
from watcher.evaluation.harness import SIDES, PairedRun, ServerTarget, run_pairs
from watcher.evaluation.providers import make_provider
from watcher.evaluation.report import EvaluationReport, NotMeasured, load_evaluation
from watcher.evaluation.settings import Evaluation
from watcher.evaluation.tasks import Task, load_tasks
from watcher.suites.build import indexes, wheels
from watcher.suites.build.env import prepare_env
from watcher.suites.run.server import resolve_command, server_room_paths
from watcher.suites.runner import version_refusal
from watcher.suites.settings import Server
from watcher.suites.state import new_run_id, sdk_package_of

log = logging.getLogger(__name__)
REPORT_FILE = "evaluation.json"


class SideError(Exception):
    """One version of the server could not be built or started."""


SKIPPED = "skipped"


def skipped_note(settings: Evaluation) -> str:
    """Why an evaluation that is declared did not run: no API key for its model (not "no evaluation set")."""
    return f"skipped: {settings.key_env()} not set (the {settings.provider} API key is read from it)"


def tasks_file(loaded: LoadedConfig, server: Server, evaluation: Evaluation, override: str | None) -> Path:
    """The task file: --tasks as given, else `evaluation.tasks` in the server's tree (or the run folder)."""
    if override:
        return Path(override)
    path = Path(evaluation.tasks)
    if path.is_absolute():
        return path
    in_tree = loaded.resolve(server.path or ".") / path
    return in_tree if in_tree.exists() else loaded.resolve(path)


@contextlib.contextmanager
def built_sides(
    loaded: LoadedConfig, server: Server, versions: Mapping[str, str], log_dir: Path, cancel: threading.Event | None
) -> Iterator[dict[str, ServerTarget]]:
    """Each version in its own environment (the suite runner's, cached); HTTP servers are started here,
    stdio servers by the MCP client. The children get a scrubbed environment: no key of ours."""
    config = loaded.config
    if server.path is None:
        raise ConfigError(
            f"servers.{server.name}: the evaluation needs the server's tree on this machine (`path`); "
            "git sources and CI executors are not evaluated yet"
        )
    secrets = secret_env_names(config)
    package = sdk_package_of(config, server)
    boundary = indexes.boundary(config)
    if boundary.refused:  # the same run boundary as the suites: never start a server outside it
        raise SideError(boundary.reason)
    with contextlib.ExitStack() as stack:
        targets: dict[str, ServerTarget] = {}
        for side, version in versions.items():
            progress.stage(f"{side}: installing {server.name} with {package} {version}")
            env = prepare_env(
                server_name=server.name,
                language=server.language,
                project=loaded.resolve(server.path),
                prepare=server.prepare,
                sdk_package=package,
                sdk_version=version,
                envs_dir=loaded.resolve(config.suites.envs_dir),
                timeout=server.timeouts.install,
                secret_names=secrets,
                cancel=cancel,
                boundary=boundary,
                shared_wheels=wheels.for_config(loaded),
            )
            if not env.ok:
                raise SideError(f"{package} {version} would not install: {env.error}")
            if server.transport == "http":
                child = scrubbed_env(secret_names=secrets, extra=server.env, path_prepend=env.bin_dirs)
                port = free_port()
                readable, hidden = server_room_paths(loaded, env)
                process = stack.enter_context(
                    ServerProcess(
                        resolve_command(server.start, env, port),
                        cwd=env.project_dir,
                        env=child,
                        log_dir=log_dir / side,
                        transport="http",
                        http_path=server.http_path,
                        port=port,
                        launcher=boundary.room(readable=readable, hidden=hidden),
                    )
                )
                progress.stage(f"{side}: starting the server under {package} {version}")
                started = process.start(server.timeouts.start, cancel)
                if not started.ok:
                    raise SideError(f"the server did not start under {package} {version}: {started.error}")
                targets[side] = ServerTarget(version, url=process.url)
            else:
                readable, hidden = server_room_paths(loaded, env)
                command = boundary.wrap(
                    resolve_command(server.start, env, None), cwd=env.project_dir, readable=readable, hidden=hidden
                )
                targets[side] = stdio_target(loaded, server, version, command, env.project_dir, env.bin_dirs)
        yield targets


def stdio_target(
    loaded: LoadedConfig, server: Server, version: str, command: list[str], cwd: str, bin_dirs: list[str]
) -> ServerTarget:
    """A stdio server the MCP client spawns, with the same scrubbed environment as every server under test."""
    child = scrubbed_env(secret_names=secret_env_names(loaded.config), extra=server.env, path_prepend=bin_dirs)
    return ServerTarget(version, command=command, env=child.env, cwd=cwd)


prepare_sides = built_sides
"""How the two versions come up (the tests swap in prepared servers to skip the installs)."""


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def run_evaluation(
    loaded: LoadedConfig,
    server_name: str,
    candidate_version: str,
    *,
    baseline_version: str | None = None,
    trials: int | None = None,
    tasks_path: str | None = None,
    cancel: threading.Event | None = None,
    run_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> EvaluationReport:
    """The report of one paired evaluation (see docs/evaluation.md); written to `run_dir/evaluation.json`.

    Raises ConfigError for an unknown server only.
    """
    began = time.monotonic()
    server = loaded.config.server(server_name)
    settings = server.evaluation
    baseline = baseline_version or server.baseline_sdk_version
    report: EvaluationReport = {
        "server": server.name,
        "team": server.team,
        "sdk": server.sdk,
        "baseline_version": baseline,
        "candidate_version": candidate_version,
        "provider": settings.provider if settings else None,
        "model": settings.model if settings else None,
        "trials": trials or (settings.trials if settings else None),
        "started_at": _stamp(),
        "verdict": ERROR,
        "error": None,
        "partial": False,
        "stopped": None,
        "not_measured": [],
        "tasks": [],
        "totals": {},
        "regressions": [],
    }
    if run_dir is None:
        runs = loaded.resolve(loaded.config.suites.runs_dir) / server.name
        run_dir = runs / f"{new_run_id(candidate_version)}-eval"
    report["run_dir"] = str(run_dir)
    key = ""
    try:
        for version in (baseline, candidate_version):  # outside strings: never substituted unchecked
            refusal = version_refusal(loaded.config, server, version)
            if refusal:
                raise SideError(refusal)
        if settings is None:
            raise SideError(f"no evaluation set declared for {server.name} (servers[].evaluation)")
        progress.stage(f"reading the tasks ({settings.tasks})")
        path = tasks_file(loaded, server, settings, tasks_path)
        report["tasks_file"] = str(path)
        tasks = load_tasks(path)
        key = (vault.environ() if environ is None else environ).get(settings.key_env(), "")
        if not key:
            note = skipped_note(settings)
            report["verdict"], report["error"] = SKIPPED, note
            report["not_measured"] = _nothing_measured(note)
            report["seconds"] = round(time.monotonic() - began, 2)
            return _save(report, run_dir, key)
        run = _run(
            loaded,
            server,
            settings,
            tasks,
            {"baseline": baseline, "candidate": candidate_version},
            trials or settings.trials,
            run_dir,
            cancel,
            key,
        )
        compared = compare(tasks, run, settings.thresholds)
        report["verdict"] = compared["verdict"]
        report["regressed_tasks"] = compared["regressed_tasks"]
        report["regressions"] = compared["regressions"]
        report["tasks"] = compared["tasks"]
        report["totals"] = compared["totals"]
        report["partial"] = run.stopped is not None
        report["stopped"] = run.stopped
        report["stop_kind"] = run.stop_kind
        report["not_measured"] = run.not_measured
        report["tools"] = run.tools
        report["trial_records"] = [t.as_dict() for t in run.trials]
    except (SideError, ConfigError) as exc:
        report["error"] = str(exc)
        report["not_measured"] = _nothing_measured(str(exc))
    except Exception as exc:  # a bug of ours must not take the worker down; the report says so
        log.exception("evaluation of %s failed", server.name, extra={"server": server.name})
        error = f"internal error: {type(exc).__name__}: {mask(str(exc), (key,))}"
        report["error"] = error
        report["not_measured"] = _nothing_measured(error)
    report["seconds"] = round(time.monotonic() - began, 2)
    return _save(report, run_dir, key)


def _run(
    loaded: LoadedConfig,
    server: Server,
    settings: Evaluation,
    tasks: list[Task],
    versions: dict[str, str],
    trials: int,
    run_dir: Path,
    cancel: threading.Event | None,
    key: str,
) -> PairedRun:
    with prepare_sides(loaded, server, versions, run_dir, cancel) as targets:
        assert set(targets) == set(SIDES)
        progress.stage(
            f"{len(tasks)} task(s) × {trials} trial(s) per version with {settings.provider} {settings.model}"
        )
        log.info(
            "evaluation of %s: %s against %s, %d task(s) × %d trial(s) with %s %s",
            server.name,
            versions["candidate"],
            versions["baseline"],
            len(tasks),
            trials,
            settings.provider,
            settings.model,
            extra={"server": server.name},
        )

        async def go() -> PairedRun:
            provider = make_provider(settings, key)
            try:
                return await run_pairs(
                    tasks,
                    targets,
                    provider,
                    trials=trials,
                    max_steps=settings.max_steps,
                    timeout=settings.timeout_seconds,
                    budget=settings.budget,
                    cancel=cancel,
                )
            finally:
                await provider.aclose()

        return asyncio.run(go())


def _nothing_measured(reason: str) -> list[NotMeasured]:
    return [{"task": "*", "reason": reason}]


def _save(report: EvaluationReport, run_dir: Path, key: str) -> EvaluationReport:
    plain = json.dumps(report, indent=2, default=str)
    text = mask(plain, (key,))
    with contextlib.suppress(OSError):
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / REPORT_FILE).write_text(text, encoding="utf-8")
    return load_evaluation(json.loads(text), str(run_dir / REPORT_FILE)) if text != plain else report


def read_evaluation(path: Path) -> EvaluationReport:
    """An evaluation.json as written (by this release or an earlier one), checked; EvaluationReportError if it is
    of no known shape."""
    return load_evaluation(json.loads(path.read_text(encoding="utf-8")), str(path))
