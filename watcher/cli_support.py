"""What every subcommand shares: reading --config, opening the state, parsing dates, reporting a bad config.

Light on purpose: the CLI builds its parser from this module before it knows the command, so the
configuration and the state (pydantic, sqlite-utils) are imported only by the functions that read them.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from typing import TYPE_CHECKING, TypeAlias

from watcher.core.errors import ConfigError

if TYPE_CHECKING:
    from watcher.config import LoadedConfig
    from watcher.core.store import Store

Handler = Callable[[argparse.Namespace], int]
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What `add_subparsers()` returns (argparse has no public name for it)."""


def loaded_config(args: argparse.Namespace) -> LoadedConfig:
    """The configuration --config names (else $MCP_WATCHER_CONFIG, else config/watcher.yaml)."""
    from watcher.config import load_config

    return load_config(getattr(args, "config", None))


@contextmanager
def config_and_state(args: argparse.Namespace) -> Iterator[tuple[LoadedConfig, Store]]:
    """The configuration in force (the central file with the team repositories' servers of the last good sync
    recorded in the state) and the state database, closed again when the command is done."""
    from watcher.config import open_state

    central = loaded_config(args)
    store = open_state(central)
    try:
        yield in_force(central, store), store
    finally:
        store.close()


def in_force(central: LoadedConfig, store: Store) -> LoadedConfig:
    """`watcher.repos.sync.in_force`, imported when a command asks (the parser is built without it)."""
    from watcher.repos import sync

    return sync.in_force(central, store)


def iso_date(text: str) -> date:
    """An argparse type: a date written YYYY-MM-DD."""
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date written YYYY-MM-DD") from exc


def config_error_exits_2(command: str) -> Callable[[Handler], Handler]:
    """A subcommand whose bad configuration is reported as `mcp-watcher COMMAND: problem`, exit status 2."""

    def wrap(handler: Handler) -> Handler:
        @functools.wraps(handler)
        def run(args: argparse.Namespace) -> int:
            try:
                return handler(args)
            except ConfigError as exc:
                print(f"mcp-watcher {command}: {exc}", file=sys.stderr)
                return 2

        return run

    return wrap
