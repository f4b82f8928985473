from __future__ import annotations

from datetime import date

import pytest

from tests.spec.helpers import fixture, spec_releases
from watcher.spec.registry import RegistryRow, parse_registry
from watcher.spec.removal import compute_deprecations, count_of, needed_seps
from watcher.spec.revisions import parse_releases
from watcher.spec.settings import Calendar

TODAY = date(2026, 11, 29)
RELEASES = parse_releases(spec_releases())


def row(feature: str, text: str, deprecated_in: str = "2026-07-28", state: str = "deprecated") -> RegistryRow:
    return RegistryRow(
        state=state,  # type: ignore[arg-type]
        feature=feature,
        feature_link=None,
        sep="SEP-1",
        sep_kind="sep",
        sep_number=1,
        sep_link=None,
        deprecated_in=deprecated_in,
        migration="",
        earliest_removal_text=text,
    )


def by_feature(results: list[dict]) -> dict[str, dict]:
    return {r["feature"]: r for r in results}


def test_todays_registry_resolves_every_row_with_a_basis():
    registry = parse_registry(fixture("registry_today.mdx"))
    results = by_feature(compute_deprecations(registry, Calendar(), RELEASES, {2596: "2026-06-03"}, TODAY))
    assert all(r["resolved"] and r["basis"] for r in results.values())
    for name in ("Roots", "Sampling", "Logging", "Dynamic Client Registration"):
        assert results[name]["window_starts"] == "2026-07-28"
        assert results[name]["window_ends"] == "2027-07-28"
        assert results[name]["earliest_removal"] == "2027-09-28"  # first projected release on/after the window
        assert results[name]["earliest_removal_projected"] is True
        assert results[name]["days_left"] == 303
        assert results[name]["flags"] == []
    include_context = results['includeContext: "thisServer" / "allServers" (Sampling)']
    assert (include_context["window_ends"], include_context["earliest_removal"]) == ("2027-07-28", "2027-09-28")
    assert include_context["basis"].startswith("follows Sampling: ")
    assert include_context["window_starts"] == "2025-11-25"
    sse = results["HTTP+SSE transport"]
    # 2026-06-03 + 3 months; the Current revision is 2026-07-28 and December 2026 moved to late March 2027.
    assert sse["window_ends"] == "2026-09-03"
    assert sse["earliest_removal"] == "2027-03-30"
    assert sse["days_left"] == 121
    assert "SEP-2596 reached Final 2026-06-03 + 3 months = 2026-09-03" in sse["basis"]
    assert "moved to March 2027" in sse["basis"]


def test_the_json_objects_have_the_documented_fields():
    [result] = compute_deprecations([row("A", "")], Calendar(), RELEASES, {}, TODAY)
    assert {
        "feature",
        "state",
        "deprecated_in",
        "sep",
        "migration",
        "earliest_removal_text",
        "window_ends",
        "earliest_removal",
        "days_left",
        "basis",
        "resolved",
    } <= set(result)


def test_every_shape_in_the_shapes_fixture():
    registry = parse_registry(fixture("registry_shapes.mdx"))
    results = by_feature(compute_deprecations(registry, Calendar(), RELEASES, {3002: "2026-01-20"}, TODAY))
    alpha = results["Alpha"]
    assert (alpha["shape"], alpha["window_ends"], alpha["earliest_removal"]) == (
        "on-or-after",
        "2027-07-28",
        "2027-09-28",
    )
    follower = results['alpha.mode: "loose" (Alpha)']
    assert (follower["shape"], follower["window_ends"], follower["earliest_removal"]) == (
        "follows",
        "2027-07-28",
        "2027-09-28",
    )
    gamma = results["Gamma transport"]
    assert (gamma["shape"], gamma["window_ends"], gamma["earliest_removal"]) == (
        "months-after-sep",
        "2027-07-20",
        "2027-09-28",
    )
    delta = results["Delta notifications"]
    assert (delta["shape"], delta["window_ends"], delta["earliest_removal"]) == ("policy", "2027-07-28", "2027-09-28")
    assert "empty cell → policy: 12 months after revision 2026-07-28 released 2026-07-28" in delta["basis"]
    epsilon = results["Epsilon"]
    assert epsilon["resolved"] is False
    assert epsilon["basis"] == "unknown shape: Removed when the moon is full"
    assert (epsilon["window_ends"], epsilon["earliest_removal"], epsilon["days_left"]) == (None, None, None)
    zeta = results["Zeta header"]
    assert zeta["resolved"] is True and zeta["earliest_removal"] == "2027-03-30"
    assert zeta["flags"] == [
        "inconsistent: the window is 65 days (2026-07-28 → 2026-10-01), shorter than the policy's 90-day floor"
    ]
    omega = results["Omega ping"]
    assert (omega["state"], omega["earliest_removal"], omega["earliest_removal_projected"]) == (
        "removed",
        "2026-07-28",
        False,
    )
    assert omega["days_left"] == -124 and omega["resolved"] is True


@pytest.mark.parametrize(
    ("text", "sep_final", "window_ends", "earliest"),
    [
        ("First revision released on or after 2027-07-28", {}, "2027-07-28", "2027-09-28"),
        ("first revision released on or after 2027-09-28.", {}, "2027-09-28", "2027-09-28"),  # on the day counts
        ("Three months after SEP-2596 reaches Final", {2596: "2026-06-03"}, "2026-09-03", "2027-03-30"),
        ("3 months after SEP-2596 reaches Final", {2596: "2026-06-03"}, "2026-09-03", "2027-03-30"),
        ("Twenty-four months after SEP-10 reaches Final.", {10: "2026-08-01"}, "2028-08-01", "2028-09-26"),
        ("", {}, "2027-07-28", "2027-09-28"),
    ],
)
def test_each_shape_resolves(text, sep_final, window_ends, earliest):
    [result] = compute_deprecations([row("Feature", text)], Calendar(), RELEASES, sep_final, TODAY)
    assert (result["window_ends"], result["earliest_removal"], result["resolved"]) == (window_ends, earliest, True)


def test_an_actual_release_date_changes_the_earliest_removal():
    releases = parse_releases(spec_releases({"tag_name": "2027-09-21", "published_at": "2027-09-21T16:00:00Z"}))
    [result] = compute_deprecations(
        [row("Roots", "First revision released on or after 2027-07-28")], Calendar(), releases, {}, TODAY
    )
    assert (result["earliest_removal"], result["earliest_removal_projected"]) == ("2027-09-21", False)
    assert result["earliest_removal_revision"] == "2027-09-21"


@pytest.mark.parametrize(
    ("rows", "feature", "basis"),
    [
        ([row("A", "Follows Nothing (SEP-9)")], "A", "follows 'Nothing', which is not a feature in the registry"),
        ([row("A", "Follows B (SEP-1)"), row("B", "Follows A (SEP-1)")], "A", "a cycle (A → B → A)"),
        ([row("A", "Follows A")], "A", "a cycle (A → A)"),
        (
            [row("A", "Follows B"), row("B", "Whenever")],
            "A",
            "follows 'B', which is unresolved (unknown shape: Whenever)",
        ),
        ([row("A", "Three months after SEP-77 reaches Final")], "A", "SEP-77: Final date unknown"),
        ([row("A", "Umpteen months after SEP-77 reaches Final")], "A", "unknown shape: Umpteen months after SEP-77"),
        ([row("A", "", deprecated_in="soon")], "A", "'Deprecated in' is not a revision date: soon"),
    ],
)
def test_what_cannot_be_resolved_says_why_and_is_never_guessed(rows, feature, basis):
    result = by_feature(compute_deprecations(rows, Calendar(), RELEASES, {}, TODAY))[feature]
    assert result["resolved"] is False
    assert result["earliest_removal"] is None and result["days_left"] is None
    assert basis in result["basis"]


def test_a_failed_sep_lookup_reason_is_shown():
    rows = [row("A", "Three months after SEP-77 reaches Final")]
    errors = {77: "SEP-77: GitHub lookup failed: HTTP 503"}
    [result] = compute_deprecations(rows, Calendar(), RELEASES, {}, TODAY, sep_errors=errors)
    assert result["resolved"] is False
    assert result["basis"] == "3 months after SEP-77 reaches Final, but SEP-77: GitHub lookup failed: HTTP 503"


def test_policy_floors_are_checked():
    short = row("A", "First revision released on or after 2027-03-01")
    [result] = compute_deprecations([short], Calendar(), RELEASES, {}, TODAY)
    assert result["flags"] == [
        "window shorter than 12 months (216 days from 2026-07-28): allowed only as a security exception"
    ]


def test_a_deprecated_in_revision_not_released_yet_uses_its_own_date():
    [result] = compute_deprecations([row("A", "", deprecated_in="2027-03-30")], Calendar(), RELEASES, {}, TODAY)
    assert result["window_starts"] == "2027-03-30"
    assert result["window_ends"] == "2028-03-30"
    assert result["earliest_removal"] == "2028-09-26"
    assert "revision 2027-03-30 (no release found; using its date)" in result["basis"]


def test_needed_seps_and_number_words():
    rows = [row("A", "Three months after SEP-2596 reaches Final"), row("B", "Follows A"), row("C", "")]
    assert needed_seps(rows) == {2596}
    assert [count_of(w) for w in ("3", "three", "Twelve", "eighteen", "twenty-four", "thirty six", "many")] == [
        3,
        3,
        12,
        18,
        24,
        36,
        None,
    ]
