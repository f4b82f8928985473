"""The run stage's step of a run: the server's start command resolved inside its environment, its room (what it
may read, what is masked) and its child environment (scrubbed, plus the values it was granted), and the
`ServerProcess` that starts and stops it there."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from watcher.boundary import toolchain
from watcher.boundary.process import ServerProcess, free_port, scrubbed_env
from watcher.config import LoadedConfig
from watcher.core import vault
from watcher.suites.build.declared import substitute
from watcher.suites.run.server_env import granted_env
from watcher.suites.state import RunState

if TYPE_CHECKING:
    from watcher.suites.build.env import EnvResult


def resolve_command(start: Sequence[str], env: EnvResult, port: int | None) -> list[str]:
    """The configured start command, run inside the environment: `python`, `node`, `npm` and the
    environment's own executables resolve to the environment's copies."""
    args = substitute(start, version=env.sdk_version, package=env.sdk_package, workdir=env.project_dir or "", port=port)
    exe, rest = args[0], args[1:]
    if exe in ("python", "python3") and env.language == "python":
        return [str(Path(env.bin_dirs[0]) / "python"), *rest]
    if exe == "node":
        return [toolchain.node(), *rest]
    if exe == "npm":
        return [*toolchain.npm_command(), *rest]
    if "/" not in exe:
        for folder in env.bin_dirs:
            candidate = Path(folder) / exe
            if candidate.exists():
                return [str(candidate), *rest]
    return args


def server_room_paths(loaded: LoadedConfig, env: EnvResult) -> tuple[list[str | Path], list[str | Path]]:
    """A server's room: its environment's folder (sealed, read-only) and the runtime it runs on are read;
    the state folder and the secret files are masked should they lie inside one of those."""
    config = loaded.config
    readable: list[str | Path] = [Path(env.project_dir).parent, *env.bin_dirs, *toolchain.runtime_paths()]
    slack = config.slack
    hidden: list[str | Path] = [
        loaded.resolve(config.state).parent,
        *(f for f in (slack.token_file, slack.webhook_file) if f),
    ]
    if config.http.auth_token_file:
        hidden.append(config.http.auth_token_file)
    return readable, hidden


def granted(run: RunState) -> dict[str, str]:
    """The server's env_from / env_files values, read once per run; raises ServerEnvError."""
    if run.granted_values is None:
        run.granted_values = granted_env(run.loaded, run.server, vault.environ())
    return run.granted_values


def sandboxed(run: RunState, command: list[str], env: EnvResult) -> list[str]:
    """A stdio server's command inside a room with no network (unchanged when there is no sandbox)."""
    readable, hidden = server_room_paths(run.loaded, env)
    return run.sandbox.wrap(command, cwd=env.project_dir, readable=readable, hidden=hidden)


def start_server(run: RunState, env: EnvResult, log_dir: Path) -> ServerProcess:
    port = free_port() if run.server.transport == "http" else None
    child = scrubbed_env(
        secret_names=run.secret_names, extra=run.server.env, path_prepend=env.bin_dirs, granted=granted(run)
    )
    readable, hidden = server_room_paths(run.loaded, env)
    return ServerProcess(
        resolve_command(run.server.start, env, port),
        cwd=env.project_dir,
        env=child,
        log_dir=log_dir,
        transport=run.server.transport,
        http_path=run.server.http_path,
        port=port,
        launcher=run.sandbox.room(readable=readable, hidden=hidden),
    )
