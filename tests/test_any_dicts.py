"""`dict[str, Any]` (and `Dict`, `Mapping`, `MutableMapping` of anything; an alias counted at each use) is allowed
only in the modules named below, each with why, and never more of it than the number beside it: a new one
elsewhere, or more in a listed module, fails here naming the module. Read with `ast` (tests/any_dicts.py)."""

from __future__ import annotations

from tests.any_dicts import count_any_mappings, sources

IO_EDGES: dict[str, tuple[int, str]] = {
    "watcher.boundary.sandbox": (1, "the sandbox's info file written by bubblewrap (--info-fd): its JSON as read"),
    "watcher.contract.diff": (17, "a server's tools/prompts/resources entries: MCP JSON objects compared as JSON"),
    "watcher.contract.handshake": (9, "the server's JSON-RPC answers (initialize, */list) as received"),
    "watcher.contract.normalize": (8, "MCP JSON entries normalised before comparison (arbitrary JSON by the protocol)"),
    "watcher.contract.rules.errors": (3, "rules read the MCP JSON entries of a snapshot"),
    "watcher.contract.rules.evolution": (3, "rules read the MCP JSON entries of a snapshot"),
    "watcher.contract.rules.lists": (5, "rules read the MCP JSON entries of a snapshot"),
    "watcher.contract.rules.prompts": (2, "rules read the MCP JSON entries of a snapshot"),
    "watcher.contract.rules.renames": (7, "rules read the MCP JSON entries of a snapshot"),
    "watcher.contract.rules.server": (8, "rules read the MCP JSON entries of a snapshot (server info, capabilities)"),
    "watcher.contract.schema_diff.bounds": (5, "JSON Schema documents (a tool's inputSchema), keyword by keyword"),
    "watcher.contract.schema_diff.keywords": (13, "JSON Schema documents (a tool's inputSchema), keyword by keyword"),
    "watcher.contract.schema_diff.shapes": (9, "JSON Schema documents (a tool's inputSchema), keyword by keyword"),
    "watcher.contract.schema_diff.strings": (3, "JSON Schema documents (a tool's inputSchema), keyword by keyword"),
    "watcher.contract.schema_diff.values": (4, "JSON Schema documents (a tool's inputSchema), keyword by keyword"),
    "watcher.contract.schema_diff.walker": (6, "JSON Schema documents (a tool's inputSchema), keyword by keyword"),
    "watcher.contract.snapshot.lists": (8, "the server's */list answers (JSON-RPC) as received, paged"),
    "watcher.contract.snapshot.outcome": (5, "the snapshot file (JSON) as written and read"),
    "watcher.contract.snapshot.probes": (6, "probe calls' JSON-RPC answers as received"),
    "watcher.contract.snapshot.session": (13, "the JSON-RPC session with the server: requests and answers"),
    "watcher.contract.snapshot.take": (1, "the snapshot's manifest file (JSON) as written"),
    "watcher.core.store": (
        6,
        "the state database's JSON columns decoded (event payloads, kv, outbox blocks)",
    ),
    "watcher.core.store_backtests": (1, "a backtests row as SQLite gives it, before its JSON answer column is decoded"),
    "watcher.core.store_clusters": (3, "the clusters tables' JSON columns decoded"),
    "watcher.core.store_schema": (
        8,
        "row types of JSON columns (event payload, outbox blocks, backtest answer)",
    ),
    "watcher.core.untrusted": (2, "the one loader of outside JSON/TOML: a parsed document before any model reads it"),
    "watcher.core.yaml_strict": (1, "the strict YAML loader's mapping constructor: YAML before validation"),
    "watcher.decisions.buttons": (15, "Block Kit buttons and their action values: slack-sdk takes dicts"),
    "watcher.digest.model": (2, "Digest.to_json: the digest as one JSON document (its dataclasses dumped)"),
    "watcher.digest.slack": (9, "the digest's Block Kit: slack-sdk takes dicts"),
    "watcher.evaluation.notices": (2, "the evaluation reply's Block Kit: slack-sdk takes dicts"),
    "watcher.evaluation.providers.anthropic": (5, "the model provider's JSON request and answer"),
    "watcher.evaluation.providers.base": (2, "the model providers' JSON request and answer"),
    "watcher.evaluation.providers.openai": (7, "the model provider's JSON request and answer"),
    "watcher.evaluation.tasks": (1, "a task's expected tool arguments: the team's task file's values, compared as is"),
    "watcher.notify.blocks": (10, "Block Kit builders: slack-sdk takes dicts"),
    "watcher.notify.delivery": (3, "Slack Web API calls and answers (slack-sdk's dicts)"),
    "watcher.notify.destination": (1, "a Slack Web API answer (slack-sdk's dict)"),
    "watcher.notify.slack_check": (1, "a Slack Web API answer (slack-sdk's dict)"),
    "watcher.ops.health": (3, "the health endpoint's JSON answer"),
    "watcher.ops.status": (9, "`status --json`'s JSON document"),
    "watcher.polling.alerts": (1, "as_json: a part of `status --json`"),
    "watcher.polling.cadence": (2, "as_json: a part of `status --json`"),
    "watcher.polling.poll": (1, "as_json: `poll --json`'s JSON document"),
    "watcher.readiness.judge": (2, "the conformance suite's checks.json entries (outside JSON) read for what to fix"),
    "watcher.repos.discover": (1, "GitHub's organisation repository listing (REST JSON answers) as received, paged"),
    "watcher.repos.onboarding": (1, "the onboarding message's Block Kit: slack-sdk takes dicts"),
    "watcher.repos.proposal": (1, "the proposal message's Block Kit: slack-sdk takes dicts"),
    "watcher.repos.show": (
        4,
        "repos_json/discovery_json: the repositories part of `status --json`, its text made from it",
    ),
    "watcher.serverset.welcome": (1, "the welcome message's Block Kit: slack-sdk takes dicts"),
    "watcher.slackapp.app": (
        16,
        "Slack's interaction payloads (Bolt hands dicts) and the modal views built for it (Block Kit)",
    ),
    "watcher.slackapp.connect": (1, "describe(): `slack check --json`'s document"),
    "watcher.slackapp.summary": (3, "the Slack status answer: sections turned into Block Kit text"),
    "watcher.sources.notices": (1, "the release alert's Block Kit: slack-sdk takes dicts"),
    "watcher.sources.packagist": (5, "Packagist's minified answer, expanded before it is parsed"),
    "watcher.spec.notices": (3, "the spec alert's Block Kit, and the stored before/after rows it shows"),
    "watcher.spec.registry": (3, "to_json/from_json: the spec registry kept as JSON in the store"),
    "watcher.spec.revisions": (2, "to_json/from_json: spec revisions kept as JSON in the store"),
    "watcher.spec.watch": (4, "the spec state kept as JSON in the store (kv) and its computed rows (see spec.removal)"),
    "watcher.suites.build.env": (1, "the build environment's marker file (JSON) as read"),
    "watcher.suites.executors.fanout": (7, "GitHub's workflow-run listings (REST JSON answers) as received, paged"),
    "watcher.suites.executors.github_actions": (4, "GitHub's API answers and the CI artifact as downloaded"),
    "watcher.suites.judge.baseline": (2, "the conformance CLI's checks.json entries (outside JSON) per scenario"),
    "watcher.suites.judge.conformance": (
        7,
        "the conformance CLI's checks.json entries (outside JSON), read and collapsed",
    ),
    "watcher.suites.notices": (2, "the result notice's Block Kit: slack-sdk takes dicts"),
}
"""Modules that take or give outside JSON (a registry's, a server's, Slack's, a CI artifact) or write a JSON
document: (the most any-mappings they may hold, why). Block Kit stays a dict where slack-sdk takes dicts."""


def problems(counts: dict[str, int]) -> list[str]:
    """Every module over its allowance, unlisted, or listed with nothing left to allow."""
    found = []
    allowed = IO_EDGES
    for module, n in sorted(counts.items()):
        if module not in allowed:
            found.append(
                f"{module}: {n} dict[str, Any] in a module that is no I/O edge: type the data, or name the edge"
            )
        elif n > allowed[module][0]:
            found.append(f"{module}: {n} dict[str, Any], {allowed[module][0]} allowed: type the new one")
    for module, (most, _) in sorted(allowed.items()):
        if counts.get(module, 0) < most:
            found.append(f"{module}: {counts.get(module, 0)} dict[str, Any] left, {most} allowed: lower the allowance")
    return found


def test_dict_of_anything_only_where_it_is_allowed():
    assert problems(count_any_mappings(sources())) == []


def test_every_allowance_says_why():
    for module, (most, reason) in IO_EDGES.items():
        assert most > 0 and len(reason) > 20 and "\n" not in reason, module


PLANTED = """
from typing import Any, Dict, Mapping, TypeAlias

from watcher.contract.diff import Entries

Json: TypeAlias = dict[str, Any]
Rows = list[Json]


def read(rows: Rows, one: Json, raw: "Mapping[str, Any]", old: Dict[str, Any], entries: Entries) -> Json:
    return one
"""


def test_a_planted_dict_of_anything_fails_naming_its_module_and_each_alias_counts_at_each_use():
    planted = {**sources(), "watcher.polling.planted": PLANTED}
    counts = count_any_mappings(planted)
    # Rows, Json twice, the quoted Mapping, Dict, and contract.diff's alias Entries (Mapping[str, dict[str, Any]]);
    # the definitions of Json and Rows count nothing themselves.
    assert counts["watcher.polling.planted"] == 6
    assert problems(counts) == [
        "watcher.polling.planted: 6 dict[str, Any] in a module that is no I/O edge: type the data, or name the edge"
    ]
    # One more in a listed edge is over its allowance.
    grown = {**sources()}
    grown["watcher.sources.packagist"] += "\n\ndef grown(x: dict[str, Any]) -> None: ...\n"
    most = IO_EDGES["watcher.sources.packagist"][0]
    assert problems(count_any_mappings(grown)) == [
        f"watcher.sources.packagist: {most + 1} dict[str, Any], {most} allowed: type the new one"
    ]
    # A listed module that holds fewer than its allowance fails too: the allowance is lowered with the code.
    shrunk = {module: text for module, text in sources().items() if module != "watcher.sources.packagist"}
    assert problems(count_any_mappings(shrunk)) == [
        f"watcher.sources.packagist: 0 dict[str, Any] left, {most} allowed: lower the allowance"
    ]
