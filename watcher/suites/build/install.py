"""The build stage's step of a run: the server's environment under one SDK version. The service's pre-build is
used when it made one (waited for while under way; its failure is the run's evidence, no second attempt,
unless the failure was the watcher's own: `blame`); otherwise the environment is built here, inside the run's
boundary."""

from __future__ import annotations

import time

from watcher.core import progress
from watcher.suites.build import prebuild, wheels
from watcher.suites.build.env import EnvResult, prepare_env
from watcher.suites.state import RunState


def install(run: RunState, version: str) -> EnvResult:
    began = time.monotonic()
    progress.stage(f"installing {run.server.name} with {run.sdk_package} {version}")
    early = prebuild.prebuilt(run.server.name, version, run.envs_dir)  # waits for a build under way
    if early is not None:
        run.prebuilt.add(version)
        if not early.ok and not early.watcher_fault:
            return early  # the pre-build's failure is this run's evidence: no second attempt
        # (one of the watcher's own, e.g. its registry unreachable then, is no evidence: the run tries again)
    env = prepare_env(
        server_name=run.server.name,
        language=run.server.language,
        project=run.project,
        sdk_package=run.sdk_package,
        sdk_version=version,
        envs_dir=run.envs_dir,
        timeout=run.server.timeouts.install,
        secret_names=run.secret_names,
        cancel=run.cancel,
        prepare=run.server.prepare,
        boundary=run.sandbox,
        shared_wheels=wheels.for_config(run.loaded),
    )
    env.seconds = time.monotonic() - began  # waiting for a pre-build is build time too
    return env
