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
