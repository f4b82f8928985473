"""What every subcommand shares: reading --config, opening the state, parsing dates, reporting a bad config."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from typing import TypeAlias

from watcher.config import LoadedConfig, load_config
from watcher.errors import ConfigError
from watcher.store import Store, open_state

Handler = Callable[[argparse.Namespace], int]
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What `add_subparsers()` returns (argparse has no public name for it)."""


def loaded_config(args: argparse.Namespace) -> LoadedConfig:
    """The configuration --config names (else $MCP_WATCHER_CONFIG, else config/watcher.yaml)."""
    return load_config(getattr(args, "config", None))


@contextmanager
def config_and_state(args: argparse.Namespace) -> Iterator[tuple[LoadedConfig, Store]]:
    """The configuration and its state database, closed again when the command is done."""
    loaded = loaded_config(args)
    store = open_state(loaded)
    try:
        yield loaded, store
    finally:
        store.close()


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
