from __future__ import annotations

import pytest

from tests.spec.helpers import fixture
from watcher.spec.registry import Registry, RegistryFormatError, parse_registry


def test_todays_registry_reads_every_row_and_column():
    registry = parse_registry(fixture("registry_today.mdx"))
    assert [r.feature for r in registry.deprecated] == [
        "Roots",
        "Sampling",
        "Logging",
        "Dynamic Client Registration",
        'includeContext: "thisServer" / "allServers" (Sampling)',
        "HTTP+SSE transport",
    ]
    assert registry.removed == []  # the Removed section is prose only today
    roots, _, logging, dcr, include_context, sse = registry.deprecated
    assert roots.feature_link == "/specification/draft/client/roots"
    assert (roots.sep, roots.sep_kind, roots.sep_number) == ("SEP-2577", "sep", 2577)
    assert roots.sep_link == "https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2577"
    assert roots.deprecated_in == "2026-07-28"  # inline code reduced to its text
    assert roots.earliest_removal_text == "First revision released on or after 2027-07-28"
    assert roots.line == 26
    assert logging.migration == "Log to stderr for stdio transports; use OpenTelemetry for observability"
    assert (dcr.sep, dcr.sep_kind, dcr.sep_number) == ("PR #2858", "pr", 2858)
    assert dcr.migration == "Client ID Metadata Documents"
    assert include_context.feature_link == "/specification/draft/client/sampling#capabilities"
    assert include_context.earliest_removal_text == "Follows Sampling (SEP-2577)"
    assert include_context.deprecated_in == "2025-11-25"
    assert sse.earliest_removal_text == "Three months after SEP-2596 reaches Final"
    assert sse.migration == "Streamable HTTP"


def test_front_matter_and_jsx_lines_are_not_sections():
    registry = parse_registry(fixture("registry_today.mdx"))
    # "title: Deprecated Features" followed by "---" would be a setext heading if the front matter were read as
    # Markdown; it must not shadow the real "## Deprecated" section.
    assert len(registry.deprecated) == 6


def test_columns_are_found_by_name_in_any_order_and_removed_rows_are_read():
    registry = parse_registry(fixture("registry_shapes.mdx"))
    alpha = registry.deprecated[0]
    assert alpha.feature == "Alpha"
    assert alpha.migration == "Use beta/list instead"
    assert alpha.earliest_removal_text == "First revision released on or after 2027-07-28"
    assert alpha.sep_number == 3001
    delta = next(r for r in registry.deprecated if r.feature == "Delta notifications")
    assert delta.earliest_removal_text == ""
    assert (delta.sep_kind, delta.sep_number) == ("pr", 3003)
    [omega] = registry.removed
    assert (omega.feature, omega.state, omega.deprecated_in, omega.removed_in) == (
        "Omega ping",
        "removed",
        "2025-06-18",
        "2026-07-28",
    )
    assert omega.extra == {"Changelog": "2026-07-28 changelog"}


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("registry_broken_table.mdx", ':24: a table in the "Deprecated" section no longer parses'),
        ("registry_renamed_column.mdx", ":24: the Deprecated table has no column 'Earliest removal'"),
        ("registry_missing_column.mdx", ":24: the Deprecated table has no column 'Migration path'"),
        ("registry_ragged_row.mdx", ":27: the row has 4 cells but the header has 5"),
    ],
)
def test_a_registry_that_changed_shape_is_an_error_naming_file_and_line(name, message):
    with pytest.raises(RegistryFormatError) as caught:
        parse_registry(fixture(name), f"fixtures/{name}")
    assert str(caught.value).startswith(f"cannot read the registry: fixtures/{name}")
    assert message in str(caught.value)
    if "Removal target" in fixture(name):
        assert "'Removal target'" in str(caught.value)  # the columns found are named, to spot a rename


def test_missing_sections_and_a_section_without_its_table_are_errors():
    today = fixture("registry_today.mdx")
    with pytest.raises(RegistryFormatError, match='no "## Removed" section'):
        parse_registry(today.replace("## Removed", "## Gone"))
    without_table = today[: today.index("| Feature")] + "Nothing here.\n\n" + today[today.index("The HTTP+SSE") :]
    with pytest.raises(RegistryFormatError, match='the "Deprecated" section has no table'):
        parse_registry(without_table)


def test_a_feature_listed_twice_is_an_error():
    today = fixture("registry_today.mdx")
    roots_line = next(line for line in today.splitlines() if line.startswith("| [Roots]"))
    with pytest.raises(RegistryFormatError, match="'Roots' is listed twice"):
        parse_registry(today.replace(roots_line, f"{roots_line}\n{roots_line}"))


def test_registry_round_trips_through_json_state():
    registry = parse_registry(fixture("registry_shapes.mdx"))
    assert Registry.from_json(registry.to_json()) == registry
