"""The console script's entry point: the watcher's secrets leave reach before anything heavy is imported.

`mcp-watcher` starts here, not in `watcher.cli`: the CLI's imports (pydantic, httpx, the scheduler, every
capability) take hundreds of milliseconds, and until the secrets are scrubbed a same-user process can read
them from `/proc/<pid>/environ`. So the first thing done is `vault.seal_early()` (non-dumpable, secret-looking
variables held in memory, the environment block overwritten); only then is the CLI imported. This module
imports nothing but `watcher.core.vault` and the secrets policy it asks (`watcher.core.secret_policy`), both
standard library only.
"""

from __future__ import annotations

from watcher.core import vault


def main() -> int:
    vault.seal_early()
    from watcher.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
