"""Every error mcp-watcher raises on purpose, as one tree.

    WatcherError                  a problem the watcher reports in words, never as a traceback
    ├── ConfigError               the YAML, a secret file or a command-line value is wrong (names file, line, key)
    │   ├── ServerEnvError        a variable granted to a server (env_from, env_files) cannot be read
    │   │                         (watcher.suites.run.server_env)
    │   └── UntrustedInputError   a file or answer someone else wrote is refused: a link, out of its folder,
    │                             too large or deep, an alias, unparseable, a top level of the wrong type
    │                             (names the file and line; also a ValueError)
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
    ├── UsageError                bad command-line input (watcher.contract.credentials)
    ├── DeliveryError             Slack or a webhook refused a message or could not be reached
    │                             (watcher.notify.delivery)
    ├── StdoutLineTooLong         a stdio server wrote a stdout line past its cap; it was ended
    │                             (watcher.boundary.stdio)
    ├── BacktestError             a backtest cannot start: the SDK's history is unreadable or the period
    │                             holds no version (watcher.backtest.replay)
    └── PollFailed                every source of a scheduled poll failed (the job is retried)

A part's own refusals and signals, which its caller turns into a result (a failed run, a refused file, a
config error naming the place), are deliberately not `WatcherError`s: no handler of the tree above may take
one for a report of its own. Each is drawn under its Python base, with its module:

    Exception
    ├── FileRefused               a file under a root that is not read: a link, outside it, over the cap
    │                             (watcher.core.safe_files)
    ├── ToolTimeout               a command did not end in time; its process group was killed
    │                             (watcher.boundary.launch)
    ├── AcceptError               a bad accept file: names the file, line and key (watcher.contract.accept)
    ├── ListChanged               a list changed while it was paged through: start again
    │                             (watcher.contract.snapshot.outcome)
    ├── EraFailure                one protocol era of a snapshot could not be taken (its status)
    │                             (watcher.contract.snapshot.outcome)
    ├── ProviderError             a model provider did not answer usefully (watcher.evaluation.providers.base)
    ├── TrialStopped              an evaluation trial could not finish (watcher.evaluation.harness)
    ├── SideError                 one side of an evaluation could not be built or started
    │                             (watcher.evaluation.run)
    ├── StarterExists             `init` finds a configuration there already (watcher.ops.starter)
    ├── GitReadError              git could not fetch or read a team repository (watcher.repos.gitread)
    ├── ActionsError              a run on GitHub Actions could not be carried out or judged
    │   │                         (watcher.suites.executors.github_api)
    │   ├── TooLarge              an answer over the size it was read with
    │   │                         (watcher.suites.executors.github_api)
    │   └── Uncertain             a POST got no clear answer: it may have been carried out
    │                             (watcher.suites.executors.github_api)
    ├── Interrupted               the service is stopping: a wait ended early
    │                             (watcher.suites.executors.github_api)
    ├── Mistake                   what `check` was asked cannot be right (watcher.suites.preflight)
    ├── CheckoutError             a server's git source cannot be fetched as configured
    │                             (watcher.suites.source.checkout)
    └── UnsafeMember              a member of a fetched tree that is not written (watcher.suites.source.extract)
    ValueError
    ├── AnswerError               a stored backtest answer of no known shape, the field named
    │                             (watcher.backtest.answer)
    ├── ClockSettingError         MCP_WATCHER_CLOCK_START is not an ISO date-time (watcher.core.clock)
    ├── ContractDocError          a contract diff document (a report handed to `accept`) of no known shape, the
    │                             field named (watcher.core.contract_doc)
    ├── EvaluationReportError     an evaluation report (evaluation.json) of no known shape, the field named
    │                             (watcher.evaluation.report)
    ├── LocatedError              a validator points its error at another place of the document
    │                             (watcher.core.configfile)
    ├── ManifestError             a manifest its own parser refuses (watcher.repos.detect)
    ├── ReportError               a stored run report or CI artifact of no known report shape, the field named
    │                             (watcher.core.run_report)
    ├── StoredEventError          a stored release event of no known shape, its key and field named
    │                             (watcher.sources.events)
    └── UnsafeVersion             a version from outside that may not be run (watcher.sources.versions)
    MarkedYAMLError
    └── YamlRefused               a document the one YAML reader does not take: an alias, past a cap
        │                         (watcher.core.yaml_strict)
        └── DuplicateKeyError     a mapping holds a key twice (watcher.core.yaml_strict)

The classes of the first tree are defined here, except those whose modules are named; each is also
importable from the module that raises it (e.g. `watcher.core.errors.ConfigError`). Catch `WatcherError` to
report any of them. Private signals that never leave their module (`schemes._Unparseable`, which the version
parsers need as a ValueError, and the egress proxy's `_Refused`) are not part of the tree.
`tests/test_errors.py` holds both drawings to the code: every class drawn exists with that parent and in the
module named, and every public exception class of watcher/ is drawn.
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
    """The suite could not be installed or its inputs are unusable; `evidence` holds output lines, `egress_refused`
    what the install room's egress proxy refused before the install failed."""

    def __init__(self, message: str, evidence: str = "", egress_refused: list[dict[str, object]] | None = None) -> None:
        super().__init__(message)
        self.evidence = evidence
        self.egress_refused = list(egress_refused or [])


class ToolMissing(SuiteError):
    """A tool the suites need (Node, npm) is not available."""


class Cancelled(SuiteError):
    """The run was cancelled half-way (the service is stopping)."""


class ContractError(WatcherError):
    """A contract snapshot or diff could not be made."""


class PollFailed(WatcherError):
    """Every source of a scheduled poll failed: the job counts as failed and runs again next time."""
