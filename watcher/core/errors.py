"""Every error mcp-watcher raises on purpose, as one tree.

    WatcherError                  a problem the watcher reports in words, never as a traceback
    ├── ConfigError               the YAML, a secret file or a command-line value is wrong (names file, line, key)
    │   ├── ServerEnvError        a variable granted to a server (env_from, env_files) cannot be read
    │   │                         (watcher.suites.run.server_env)
    │   └── UntrustedInputError   a file or answer someone else wrote is refused: a link, out of its folder,
    │                             too large or deep, an alias, unparseable, a top level of the wrong type
    │                             (names the file and line; watcher.core.untrusted)
    ├── StateError                the state database is missing, corrupt, truncated or unwritable (names the
    │   │                         file and the remedy)
    │   └── SchemaTooNew          the state file was written by a newer mcp-watcher
    ├── SourceError               a registry is down, timed out or answered something unreadable
    │   └── ResponseTooLarge      an answer over http_client.max_response_bytes (watcher.sources.base)
    ├── SpecError
    │   ├── RegistryFormatError   the deprecated-features page no longer has the shape we read
    │   └── SepLookupError        a SEP's final date could not be looked up
    ├── SuiteError                a step of a suite run could not be carried out (install, start, baseline)
    │   ├── ConformanceError      the conformance suite would not install or its inputs are unusable
    │   ├── ToolMissing           Node or npm is not available
    │   ├── RoomRefused           outside code was to run and no room can be made here (suites.sandbox is
    │   │                         auto or bubblewrap) (watcher.boundary.sandbox)
    │   └── Cancelled             the run was cancelled (the service is stopping)
    ├── ContractError
    │   └── SnapshotError         a snapshot folder is missing or malformed (watcher.contract.diff)
    ├── UsageError                bad command-line input (watcher.contract.commands)
    ├── DeliveryError             Slack or a webhook refused a message or could not be reached
    │                             (watcher.notify.delivery)
    ├── StdoutLineTooLong         a stdio server wrote a stdout line past its cap; it was ended
    │                             (watcher.boundary.stdio)
    ├── BacktestError             a backtest cannot start: the SDK's history is unreadable or the period
    │                             holds no version (watcher.backtest.replay)
    └── PollFailed                every source of a scheduled poll failed (the job is retried)

The classes are defined here, except those whose modules are named above; each is also importable
from the module that raises it (e.g. `watcher.core.errors.ConfigError`). Catch `WatcherError` to report
any of them. Private signals that never leave their module (`config._RefError` and
`versions._Unparseable`, which pydantic and the version parsers need as ValueError, and the
snapshot's `_ListChanged` / `_EraFailure`) are not part of the tree.
"""

from __future__ import annotations


class WatcherError(Exception):
    """Base class of every error mcp-watcher raises on purpose."""


class ConfigError(WatcherError):
    """A configuration problem, already phrased for the person who edits the file."""


class UntrustedInputError(ConfigError, ValueError):
    """Data from outside (a team's file, a suite version's, a CI report, an answer) that the one loader
    (`watcher.core.untrusted`) refuses; the message names the file, the line where there is one, and why.
    A ValueError too, as the parsers' own errors are, so a caller's handling of an unreadable body holds."""


class StateError(WatcherError):
    """The state database cannot be used."""


class SchemaTooNew(StateError):
    """The state file's schema is newer than this mcp-watcher knows."""


class SourceError(WatcherError):
    """The registry could not be read: down, timed out, or answered something we cannot parse."""


class SpecError(WatcherError):
    """The specification's own pages could not be read."""


class RegistryFormatError(SpecError):
    """The registry page no longer has the shape we read. The message starts "cannot read the registry: "."""

    def __init__(self, source: str, line: int | None, problem: str) -> None:
        where = f"{source}:{line}" if line else source
        super().__init__(f"cannot read the registry: {where}: {problem}")
        self.source = source
        self.line = line
        self.problem = problem


class SepLookupError(SpecError):
    """A SEP's final date could not be looked up."""


class SuiteError(WatcherError):
    """A step of a suite run the watcher could not carry out; the message says which and why."""


class ConformanceError(SuiteError):
    """The suite could not be installed or its inputs are unusable; `evidence` holds output lines."""

    def __init__(self, message: str, evidence: str = "") -> None:
        super().__init__(message)
        self.evidence = evidence


class ToolMissing(SuiteError):
    """A tool the suites need (Node, npm) is not available."""


class Cancelled(SuiteError):
    """The run was cancelled half-way (the service is stopping)."""


class ContractError(WatcherError):
    """A contract snapshot or diff could not be made."""


class PollFailed(WatcherError):
    """Every source of a scheduled poll failed: the job counts as failed and runs again next time."""
