"""Family `server`: protocol versions, capabilities, extensions, server info.
Each rule fires on a minimal before/after pair, with its grade."""

from __future__ import annotations

import pytest

from tests.contract.helpers import server_record
from tests.contract.rules.helpers import (
    Case,
    assert_case_fires,
    server_diff,
    server_records_diff,
)

CASES: list[Case] = [
    (
        "protocol version removed",
        "protocol_version_removed",
        "supportedVersions",
        True,
        False,
        lambda: server_diff({"supportedVersions": ["2025-11-25", "2026-07-28"]}, {"supportedVersions": ["2026-07-28"]}),
    ),
    (
        "era no longer supported",
        "protocol_version_removed",
        "supportedVersions",
        True,
        False,
        lambda: server_diff({}, {"status": "unsupported: initialize failed with -32601"}),
    ),
    (
        "protocol version added",
        "protocol_version_added",
        "supportedVersions",
        False,
        False,
        lambda: server_diff({"supportedVersions": ["2026-07-28"]}, {"supportedVersions": ["2026-07-28", "2027-03-30"]}),
    ),
    (
        "listChanged dropped",
        "capability_removed",
        "capabilities.tools.listChanged",
        True,
        False,
        lambda: server_diff({}, {"capabilities": {"tools": {"listChanged": False}}}),
    ),
    (
        "extension removed",
        "capability_removed",
        "extensions.io.example/apps",
        True,
        False,
        lambda: server_diff({"extensions": {"io.example/apps": {}}}, {"extensions": {}}),
    ),
    (
        "subscribe added",
        "capability_added",
        "capabilities.resources",
        False,
        False,
        lambda: server_diff({}, {"capabilities": {"tools": {"listChanged": True}, "resources": {"subscribe": True}}}),
    ),
    (
        "extension settings changed",
        "capability_changed",
        "extensions.io.example/apps.version",
        False,
        False,
        lambda: server_diff(
            {"extensions": {"io.example/apps": {"version": "1"}}}, {"extensions": {"io.example/apps": {"version": "2"}}}
        ),
    ),
    (
        "a client capability a server declared is gone",
        "non_spec_capability_changed",
        "capabilities.elicitation",
        False,
        False,
        lambda: server_diff(
            {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}, "elicitation": {}}},
            {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}},
        ),
    ),
    (
        "experimental entry removed",
        "experimental_capability_removed",
        "capabilities.experimental.io.example/preview",
        False,
        False,
        lambda: server_diff(
            {"capabilities": {"tools": {}, "experimental": {"io.example/preview": {}}}}, {"capabilities": {"tools": {}}}
        ),
    ),
    (
        "experimental entry settings changed",
        "experimental_capability_changed",
        "capabilities.experimental.io.example/preview",
        False,
        False,
        lambda: server_diff(
            {"capabilities": {"experimental": {"io.example/preview": {"version": 1}}}},
            {"capabilities": {"experimental": {"io.example/preview": {"version": 2}}}},
        ),
    ),
    (
        "server version changed",
        "server_info_changed",
        "serverInfo.version",
        False,
        False,
        lambda: server_diff(
            {"serverInfo": {"name": "demo", "version": "1.0"}}, {"serverInfo": {"name": "demo", "version": "1.1"}}
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_rule_triggers_with_its_grade(case: Case) -> None:
    assert_case_fires(case)


def test_cross_era_server_comparison_skips_negotiated_fields() -> None:
    legacy = server_record("legacy", capabilities={"tools": {"listChanged": False}})
    modern = server_record("modern", capabilities={"tools": {"listChanged": True}})
    assert server_records_diff(legacy, modern, era_bound=False) == []
    assert {c["rule"] for c in server_records_diff(legacy, modern, era_bound=True)} == {
        "protocol_version_removed",
        "protocol_version_added",
        "capability_added",
    }


def test_a_non_spec_key_says_why_and_a_spec_one_beside_it_still_breaks() -> None:
    changes = server_diff(
        {"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": True}, "elicitation": {}}},
        {"protocolVersion": "2025-06-18", "capabilities": {}},
    )
    assert [(c["rule"], c["path"], c["breaksClients"]) for c in changes] == [
        ("non_spec_capability_changed", "capabilities.elicitation", False),
        ("capability_removed", "capabilities.tools", True),
    ]
    assert changes[0]["hint"] == (
        "not a server capability in spec revision 2025-06-18 (elicitation is a client capability): "
        "no client negotiates on it"
    )


def test_a_spec_capability_is_judged_by_the_revision_of_the_side_that_declares_it() -> None:
    # tasks is a server capability of 2025-11-25; the candidate negotiated 2025-06-18, which has none: still gone.
    tasks = {"list": {}, "requests": {"tools": {"call": {}}}}
    changes = server_diff(
        {"protocolVersion": "2025-11-25", "capabilities": {"tasks": tasks}},
        {"protocolVersion": "2025-06-18", "capabilities": {}},
    )
    assert [(c["rule"], c["path"]) for c in changes] == [("capability_removed", "capabilities.tasks")]
    # Members the spec does not define inside a defined capability are information.
    inner = server_diff(
        {"capabilities": {"tools": {"listChanged": True, "x-cache": True}}},
        {"capabilities": {"tools": {"listChanged": True}}},
    )
    assert [(c["rule"], c["path"]) for c in inner] == [("non_spec_capability_changed", "capabilities.tools.x-cache")]


def test_an_experimental_map_removed_whole_is_reported_entry_by_entry() -> None:
    changes = server_diff(
        {"capabilities": {"experimental": {"a": {}, "b": {"on": True}}}}, {"capabilities": {"experimental": {}}}
    )
    assert [(c["rule"], c["path"], c["grade"]) for c in changes] == [
        ("experimental_capability_removed", "capabilities.experimental.a", "dangerous"),
        ("experimental_capability_removed", "capabilities.experimental.b", "dangerous"),
    ]
