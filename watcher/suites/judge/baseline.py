"""Write a server's committed baselines from a run under its baseline SDK version.

    python -m watcher.suites.judge.baseline --config CONFIG --server NAME [--sdk-version V] [--only failures|snapshot]

- the expected-failures file (`expected_failures` in the config): one `scenario:check-id` entry per
  check that fails today in a scored scenario of any configured requirement set. A per-check entry
  excuses that check only, so every other check of the scenario stays enforced. When a check fails
  on one wire and passes on the other, one file cannot serve both sets: give the path a
  `{requirements}` placeholder and one file per set is written.
- the baseline snapshot (`baseline_snapshot`): the contract in both eras, as `mcp-watcher snapshot`.

A server from a team repository (or any git source) is checked out at the commit in use and both files are
written inside that checkout, at the paths its config names: they belong in the team's repository.

Review the diff of what it writes before committing it: a baseline records what is true today.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

from watcher.boundary.network import Reach
from watcher.config import LoadedConfig, load_config
from watcher.core.errors import ConfigError, SuiteError, WatcherError
from watcher.core.timefmt import today_utc
from watcher.suites.build import indexes
from watcher.suites.build.install import install
from watcher.suites.judge import conformance
from watcher.suites.judge.contract import take_snapshot
from watcher.suites.run.server import start_server
from watcher.suites.source.checkout import display_url
from watcher.suites.source.fetch import fetch_source
from watcher.suites.state import RunState

HEADER = """\
# Expected conformance failures of {server} on {package} {version}, for {suite}.
# Generated on {date} by `python -m watcher.suites.judge.baseline --server {server}` (watcher/suites/README.md)
# from the suite's checks.json files; requirement sets: {sets}.
# Each entry excuses one check (scenario:check-id); the suite's other checks stay enforced.
"""


def failing_checks(results: dict[str, list[dict[str, Any]]], requirement_set: conformance.RequirementSet) -> list[str]:
    """`scenario:check-id` for every failing (FAILURE/WARNING) check of the scenarios the set scores."""
    entries = []
    for scenario in requirement_set.scored:
        statuses = conformance.collapse(results.get(scenario, []))
        entries += [f"{scenario}:{cid}" for cid, status in statuses.items() if status in conformance.FAILING]
    return sorted(entries)


def conflicts(
    entries: list[str], runs: dict[str, tuple[conformance.RequirementSet, dict[str, list[dict[str, Any]]]]]
) -> list[str]:
    """Entries that one shared file cannot hold: the check passes in another set (a stale entry there)."""
    found = []
    for entry in entries:
        scenario, _, cid = entry.partition(":")
        for revision, (requirement_set, results) in runs.items():
            ran = scenario in requirement_set.scored and scenario in results
            if ran and conformance.collapse(results[scenario]).get(cid) == "SUCCESS":
                found.append(f"{entry} passes under {revision}")
    return found


def write_expected_failures(
    path: Path, entries: list[str], *, server: str, package: str, version: str, suite: str, sets: str
) -> None:
    header = HEADER.format(
        server=server,
        package=package,
        version=version,
        suite=suite,
        date=today_utc().isoformat(),
        sets=sets,
    )
    body = yaml.safe_dump({"server": entries}, default_flow_style=False, sort_keys=False, width=200)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + body, encoding="utf-8")


def generate(loaded: LoadedConfig, server_name: str, version: str | None, only: str | None) -> list[Path]:
    server = loaded.config.server(server_name)
    version = version or server.baseline_sdk_version
    # The stages a check goes through, by hand: build, run, then the judge's tools write what they read.
    run = RunState(loaded, server, version, None, indexes.boundary(loaded.config))
    if run.sandbox.refused:  # the same boundary as a run: the server and the suite run in rooms or not at all
        raise SuiteError(run.sandbox.reason)
    run.run_dir.mkdir(parents=True, exist_ok=True)
    if not fetch_source(run):  # a team repository's server: its tree is checked out at the commit in use
        raise SuiteError("; ".join(reason["reason"] for reason in run.report["reasons"]))
    env = install(run, version)
    if not env.ok:
        raise SuiteError(f"install of {run.sdk_package} {version} failed: {env.error}\n{env.evidence}")
    written: list[Path] = []
    with start_server(run, env, run.run_dir) as process:
        started = process.start(server.timeouts.start)
        if not started.ok:
            raise SuiteError(f"the server did not start: {started.error}\n{started.evidence}")
        if only in (None, "failures"):
            written += _expected_failures(loaded, run, process.reach(), version)
        if only in (None, "snapshot"):
            if not server.baseline_snapshot:
                raise ConfigError(f"server {server.name!r} has no baseline_snapshot folder configured")
            target = run.repo_path(server.baseline_snapshot)
            shutil.rmtree(target, ignore_errors=True)
            take_snapshot(run, process, env, target)
            written.append(target)
    return written


def _expected_failures(loaded: LoadedConfig, run: RunState, reach: Reach | None, version: str) -> list[Path]:
    server = run.server
    if not server.expected_failures:
        raise ConfigError(f"server {server.name!r} has no expected_failures file configured")
    if reach is None:
        raise ConfigError(f"server {server.name!r} is not served over HTTP: the conformance suite cannot run")
    settings = loaded.config.conformance
    tool = conformance.ensure_conformance(
        settings.package,
        run.envs_dir / "_tools",
        boundary=run.sandbox,
        registry=settings.npm_registry,
        secret_names=run.secret_names,
    )
    runs = {}
    for revision in server.requirements:
        out_dir = run.run_dir / "conformance" / revision
        result = conformance.run_requirement_set(
            tool,
            server=reach,
            boundary=run.sandbox,
            revision=revision,
            baseline_path=None,
            out_dir=out_dir,
            timeout=server.timeouts.suite,
            secret_names=run.secret_names,
        )
        if result.get("error"):
            raise SuiteError(f"conformance {revision}: {result['error']}\n{result.get('evidence', '')}")
        runs[revision] = (
            conformance.load_requirement_set(tool, revision),
            conformance.collect_checks(out_dir / "results"),
        )
    configured = run.repo_path(server.expected_failures)
    common = dict(server=server.name, package=run.sdk_package, version=version, suite=tool.package)
    if conformance.REQUIREMENTS_PLACEHOLDER in str(configured):
        paths = []
        for revision, (requirement_set, results) in runs.items():
            path = conformance.expected_failures_path(configured, revision)
            assert path is not None
            entries = failing_checks(results, requirement_set)
            write_expected_failures(path, entries, sets=revision, **common)
            paths.append(path)
        return paths
    entries = sorted(
        {e for requirement_set, results in runs.values() for e in failing_checks(results, requirement_set)}
    )
    clashes = conflicts(entries, runs)
    if clashes:
        raise SuiteError(
            "one expected-failures file cannot serve every requirement set; put '{requirements}' in the "
            "expected_failures path for one file per set:\n  " + "\n  ".join(clashes)
        )
    write_expected_failures(configured, entries, sets=", ".join(runs), **common)
    return [configured]


def _in_force(central: LoadedConfig, server_name: str, version: str | None) -> tuple[LoadedConfig, str | None]:
    """The config with the team repositories' servers as the state recorded them, and the version in the polls'
    spelling (`2.2` → `2.2.0`)."""
    from watcher.config import open_state
    from watcher.repos.sync import in_force
    from watcher.suites.preflight import known_spelling

    store = open_state(central)
    try:
        loaded = in_force(central, store)
        if version is not None:
            version = known_spelling(loaded, store, loaded.config.server(server_name), version)
        return loaded, version
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m watcher.suites.judge.baseline", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--config", help="the watcher config (default: config/watcher.yaml or MCP_WATCHER_CONFIG)")
    parser.add_argument("--server", required=True)
    parser.add_argument("--sdk-version", help="default: the server's baseline_sdk_version")
    parser.add_argument("--only", choices=["failures", "snapshot"], help="write only one of the two baselines")
    args = parser.parse_args(argv)
    try:
        loaded, version = _in_force(load_config(args.config), args.server, args.sdk_version)
        written = generate(loaded, args.server, version, args.only)
    except WatcherError as exc:  # configuration, install, start or suite problems, phrased for the reader
        print(f"baseline: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    source = loaded.config.server(args.server).source
    if source is not None and written:  # written into a checkout: the team's repository is where it belongs
        print(f"these are in a checkout of {display_url(source.git)} at {source.ref[:12]}: commit them there")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
