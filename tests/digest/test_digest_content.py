"""The digest's content, assembled from a fixed state (registry, runs, releases, outbox) for a fixed date."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from tests.digest.helpers import (
    DIGEST_NOW,
    LOGGING_WARNING,
    REGISTRY,
    TODAY,
    FixedState,
    build_state,
    finish_run,
    pin_created,
    seed_spec,
    write_config,
)
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.digest.build import build_digest
from watcher.digest.markdown import render_markdown
from watcher.digest.sections.exposure import features_named
from watcher.sources.notices import release_page
from watcher.spec.notices import Change


@pytest.fixture
def state(tmp_path: Path) -> FixedState:
    return build_state(tmp_path)


def test_what_is_on_its_way_out_soonest_first_with_removed_rows_last(state: FixedState):
    digest = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW)
    assert digest.week == "2026-W49" and digest.channel == "#books-mcp"
    order = [(f.feature, f.state, f.earliest_removal, f.days_left) for f in digest.features]
    assert order == [
        # SEP-2596 Final 2026-06-03 + 3 months; the September 2026 slot passed unreleased, December moved to March.
        ("HTTP+SSE transport", "deprecated", "2027-03-30", 120),
        ("Logging", "deprecated", "2027-09-28", 302),
        ("Roots", "deprecated", "2027-09-28", 302),
        ("Sampling", "deprecated", "2027-09-28", 302),
        ('includeContext: "thisServer" / "allServers" (Sampling)', "deprecated", "2027-09-28", 302),
        ("JSON-RPC batching", "removed", "2025-06-18", (date(2025, 6, 18) - TODAY).days),
    ]
    logging = next(f for f in digest.features if f.feature == "Logging")
    assert logging.migration == "Log to stderr for stdio transports; use OpenTelemetry for observability"
    assert logging.earliest_removal_text == "First revision released on or after 2027-07-28"
    assert logging.projected and logging.resolved and "2027-07-28" in logging.basis
    assert digest.problems == []


def test_changes_since_the_last_digest_are_listed_and_older_ones_are_not(state: FixedState):
    digest = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW)
    assert [(c.kind, c.subject) for c in digest.changes] == [("earliest-removal-changed", "Roots")]
    change = digest.changes[0]
    assert change.before["earliest_removal"] == "2027-03-30" and change.after["earliest_removal"] == "2027-09-28"

    # The digest goes out; next week only what was recorded after it counts.
    state.store.enqueue(Notice("digest:books:2026-W49", "books", "#books-mcp", "digest", "digest", []))
    pin_created(state.store, "outbox", "digest:books:2026-W49", DIGEST_NOW)
    logging = next(r for r in state.rows if r["feature"] == "Logging")
    moved = Change("moved-to-removed", "Logging", logging, {**logging, "state": "removed"}, "spec:g3:logging")
    state.store.add_event(moved.key, "spec-moved-to-removed", moved.to_json())
    pin_created(state.store, "events", moved.key, datetime(2026, 12, 2, 6, 0, tzinfo=UTC))
    next_week = build_digest(
        state.loaded, state.store, "books", date(2026, 12, 7), until=datetime(2026, 12, 7, 9, tzinfo=UTC)
    )
    assert next_week.since == "2026-11-30T09:00:00Z"
    assert [(c.kind, c.subject) for c in next_week.changes] == [("moved-to-removed", "Logging")]
    assert "**Removed:** **Logging**" in render_markdown(next_week)


def test_each_server_is_listed_with_its_evidence_or_nothing_found(state: FixedState):
    digest = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW)
    by_server = {s.server: s for s in digest.servers}
    assert list(by_server) == ["library", "catalog", "shelf"]

    library = {e.feature: e for e in by_server["library"].exposures}
    assert list(library) == ["Logging", "Sampling"]
    logging = library["Logging"]
    assert (logging.earliest_removal, logging.days_left) == ("2027-09-28", 302)
    assert [(e.kind, e.detail) for e in logging.evidence] == [
        ("capability", "declares the `logging` capability"),
        ("sdk-warning", f"MCPDeprecationWarning: {LOGGING_WARNING} (×3)"),
    ]
    assert "legacy and modern eras" in logging.evidence[0].source
    assert logging.evidence[1].source.startswith("suite run #1 (python 2.4.0b1)")
    sampling = library["Sampling"].evidence
    assert [(e.kind, e.detail) for e in sampling] == [
        ("conformance", "conformance scenario `tools-call-sampling` passed (2026-07-28)")
    ]
    # "server-sse-polling" passed too: that tests Streamable HTTP, not the deprecated HTTP+SSE transport.
    assert "HTTP+SSE transport" not in library

    catalog = by_server["catalog"]
    assert [(e.feature, [x.kind for x in e.evidence]) for e in catalog.exposures] == [
        ("HTTP+SSE transport", ["transport"])
    ]
    assert catalog.exposures[0].days_left == 120
    assert "no finished suite run yet" in catalog.gaps and "no baseline snapshot configured" in catalog.gaps

    shelf = by_server["shelf"]
    assert shelf.exposures == [] and shelf.checked and shelf.gaps == ["no finished suite run yet"]
    affected = {f.feature: f.affected_servers for f in digest.features if f.affected_servers}
    assert affected == {"HTTP+SSE transport": ["catalog"], "Logging": ["library"], "Sampling": ["library"]}
    assert "**shelf** (python SDK)\n  - **Nothing found**: none of the 5 deprecated features seen in use" in (
        render_markdown(digest)
    )


def test_sdk_releases_of_the_week_with_each_servers_verdict(state: FixedState):
    digest = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW)
    listed = [(r.package, r.version, r.prerelease) for r in digest.releases]
    # 2.3.0 was first seen before the period; the Go pre-release belongs to another team's SDK.
    assert listed == [
        ("mcp", "2.4.0b1", True),
        ("@modelcontextprotocol/sdk", "2.0.0-beta.3", True),
        ("mcp", "2.3.1", False),
    ]
    beta, ts_beta, stable = digest.releases
    assert beta.thread is not None and beta.thread.url == "https://slack.com/archives/C00000001/p1764144000000200"
    assert [(v.server, v.verdict) for v in beta.verdicts] == [("library", "pass"), ("shelf", "pending")]
    assert beta.verdicts[0].run_id == 1
    assert [(v.server, v.verdict, v.detail) for v in ts_beta.verdicts] == [
        ("catalog", "pending", "suite run #2 queued")
    ]
    assert ts_beta.thread is None
    assert ts_beta.page == release_page("npm", "@modelcontextprotocol/sdk", "2.0.0-beta.3")
    assert ts_beta.page is None, "no npm page link: the project names no npm host"
    assert {v.verdict for v in stable.verdicts} == {"not-run"}


def test_what_is_coming(state: FixedState):
    look = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW).outlook
    # The release planned for December 2026 moved to late March 2027 (the last Tuesday: 30 March).
    assert (look.next_revision, look.next_revision_actual) == ("2027-03-30", False)
    assert (look.beta_window_start, look.beta_window_end, look.beta_window_open) == (
        "2027-02-13",
        "2027-03-30",
        False,
    )
    assert (look.next_removal, look.next_removal_days, look.next_removal_features) == (
        "2027-03-30",
        120,
        ["HTTP+SSE transport"],
    )


def test_a_registry_never_read_is_said_loudly_not_shown_as_no_deprecations(tmp_path: Path):
    loaded = write_config(tmp_path)
    store = Store(loaded.resolve(loaded.config.state))
    digest = build_digest(loaded, store, "books", TODAY, until=DIGEST_NOW)
    assert digest.features == []
    assert any("has not been read yet" in p for p in digest.problems)
    text = render_markdown(digest)
    assert "has not been read yet" in text and "not because nothing is deprecated" in text


def test_an_unknown_removal_shape_is_shown_unresolved(tmp_path: Path):
    loaded = write_config(tmp_path)
    store = Store(loaded.resolve(loaded.config.state))
    odd = REGISTRY.replace(
        "First revision released on or after 2027-07-28 |\n| [Sampling]", "When the moon is full |\n| [Sampling]"
    )
    seed_spec(store, loaded, odd)
    digest = build_digest(loaded, store, "books", TODAY, until=DIGEST_NOW)
    roots = next(f for f in digest.features if f.feature == "Roots")
    assert roots.resolved is False and roots.earliest_removal is None
    assert [f.feature for f in digest.deprecated][-1] == "Roots", "unresolved rows come after dated ones"
    assert any("Roots" in p and "not guessed" in p for p in digest.problems)
    assert "Earliest removal: **UNRESOLVED** — not guessed: unknown shape: When the moon is full" in render_markdown(
        digest
    )


def test_feature_words_pick_the_specific_feature():
    rows = [
        {"key": "sampling", "feature": "Sampling"},
        {"key": "includecontext-thisserver-allservers-sampling", "feature": "includeContext (Sampling)"},
        {"key": "http-sse-transport", "feature": "HTTP+SSE transport"},
        {"key": "resource-subscriptions", "feature": "Resource subscriptions"},
    ]
    named = lambda text: [r["key"] for r in features_named(text, rows)]  # noqa: E731
    assert named("includeContext is deprecated together with sampling") == [
        "includecontext-thisserver-allservers-sampling"
    ]
    assert named("Context.sample() uses sampling/createMessage, deprecated") == ["sampling"]
    assert named("SseServerTransport is deprecated") == ["http-sse-transport"]
    assert named("SSEServerTransport is deprecated; use StreamableHTTPServerTransport") == ["http-sse-transport"]
    assert named("mcp.client.sse.sse_client() is deprecated") == ["http-sse-transport"]
    assert named("CLASSES are assessed, Assessment too") == []
    assert named("resource subscriptions are deprecated") == ["resource-subscriptions"]


def test_a_newer_run_that_never_started_the_server_does_not_hide_evidence(state: FixedState):
    failed_install = {
        "server": "library",
        "sdk": "python",
        "sdk_version": "2.5.0a1",
        "verdict": "fail",
        "reasons": [{"verdict": "fail", "reason": "mcp 2.5.0a1: install failed: no matching distribution"}],
        "install": {"ok": False},
        "start": None,
        "conformance": [],
        "deprecation_warnings": [],
    }
    finish_run(state.store, "library", "python", "2.5.0a1", "fail", failed_install)
    digest = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW)
    library = next(s for s in digest.servers if s.server == "library")
    kinds = {e.kind for x in library.exposures for e in x.evidence}
    assert kinds == {"capability", "sdk-warning", "conformance"}
    assert any("suite run #1 (python 2.4.0b1)" in c for c in library.checked)
