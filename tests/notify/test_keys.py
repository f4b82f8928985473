"""Every key format, spelled out: a changed spelling would send every notice again after an upgrade."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

from watcher.notify import keys


def test_release_keys_and_the_runs_they_trigger():
    assert keys.release_event("python", "2.4.0b1") == "release:python:2.4.0b1"
    assert keys.release_alert("python", "2.4.0b1", "books") == "release:python:2.4.0b1:books"
    assert keys.suite_result("library", "2.4.0b1", "books") == "run:library:2.4.0b1:books"
    assert keys.baseline_trigger("typescript", "1.23.0") == "baseline:typescript:1.23.0"
    assert keys.is_baseline_trigger("baseline:typescript:1.23.0")
    assert not keys.is_baseline_trigger(keys.release_event("typescript", "1.23.0"))
    assert not keys.is_baseline_trigger(None)


def test_per_team_and_per_channel_copies_append_the_target():
    assert keys.for_team("spec:new-rc:2026-11-25-RC", "books") == "spec:new-rc:2026-11-25-RC:books"
    assert keys.for_channel("spec:registry-recovered:2", "#ops") == "spec:registry-recovered:2:#ops"


def test_digest_keys():
    assert keys.weekly_digest("books", "2026-W49") == "digest:books:2026-W49"
    assert keys.digest_reply("digest:books:2026-W49", 2) == "digest:books:2026-W49:part2"
    paris = timezone(timedelta(hours=1))
    moment = datetime(2026, 12, 1, 10, 30, 5, tzinfo=paris)
    assert keys.forced_digest("books", "2026-W49", moment) == "digest:books:2026-W49:forced-20261201T093005Z"
    assert keys.forced_digest("books", "2026-W49", moment) != keys.forced_digest(
        "books", "2026-W49", moment + timedelta(seconds=1)
    )


def test_spec_keys():
    assert keys.spec_registry_change(7, "new-deprecation", "roots") == "spec:registry:g7:new-deprecation:roots"
    assert keys.spec_release_change("new-revision", "2026-11-25") == "spec:new-revision:2026-11-25"
    assert keys.spec_source_recovered("releases", 3) == "spec:releases-recovered:3"
    error = "HTTP 503 from the registry"
    expected = hashlib.sha256(error.encode()).hexdigest()[:12]
    assert keys.spec_source_unreadable("registry", 3, error) == f"spec:registry-unreadable:3:{expected}"
    assert keys.spec_source_unreadable("registry", 3, "timeout") != keys.spec_source_unreadable("registry", 3, error)
    unresolved = keys.spec_unresolved("sampling", "next year", "no date in the text")
    digest = hashlib.sha256(b"next year|no date in the text").hexdigest()[:12]
    assert unresolved == f"spec:unresolved:sampling:{digest}" and len(digest) == 12


def test_delivery_state_key():
    assert keys.slack_channel_id("#books-mcp") == "slack_channel_id:#books-mcp"


def test_short_hash_is_stable_and_twelve_hex_characters():
    assert keys.short_hash("x") == "2d711642b726"
    assert keys.short_hash("x") != keys.short_hash("y")
