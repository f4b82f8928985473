"""Every rule, triggered by a minimal before/after pair (table-driven), with its grade checked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.contract.helpers import obj, server_record, tool
from watcher.contract.diff import compare_list
from watcher.contract.normalize import LIST_BY_NAME
from watcher.contract.rules import RULES, markdown_table
from watcher.contract.rules.errors import compare_errors
from watcher.contract.rules.server import compare_server

Changes = list[dict[str, Any]]


def tools_diff(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> Changes:
    return _list_diff("tools", before, after)


def _list_diff(list_name: str, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> Changes:
    spec = LIST_BY_NAME[list_name]
    return compare_list(spec, {e[spec.key]: e for e in before}, {e[spec.key]: e for e in after})


def schema_diff(before: dict[str, Any], after: dict[str, Any]) -> Changes:
    return tools_diff([tool("t", before)], [tool("t", after)])


def output_diff(before: dict[str, Any] | None, after: dict[str, Any] | None) -> Changes:
    def with_output(schema: dict[str, Any] | None) -> dict[str, Any]:
        return tool("t", obj({})) if schema is None else tool("t", obj({}), outputSchema=schema)

    return tools_diff([with_output(before)], [with_output(after)])


def prompt(name: str, *arguments: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"name": name, "description": f"The {name} prompt.", "arguments": list(arguments), **fields}


def server_diff(before: dict[str, Any], after: dict[str, Any]) -> Changes:
    return list(compare_server(server_record(**before), server_record(**after)))


STR = {"type": "string"}
INT = {"type": "integer"}
NULLABLE_STR = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
ADDRESS_DEFS = {"Address": {"type": "object", "properties": {"city": STR}, "required": ["city"], "title": "Address"}}

# (case id, rule id, expected path, breaksClients, affectsModels, produce the changes)
CASES: list[tuple[str, str, str | None, bool, bool, Callable[[], Changes]]] = [
    # lists
    ("tool added", "tool_added", None, False, True, lambda: tools_diff([], [tool("a")])),
    ("tool removed", "tool_removed", None, True, True, lambda: tools_diff([tool("a")], [])),
    ("prompt added", "prompt_added", None, False, False, lambda: _list_diff("prompts", [], [prompt("p")])),
    ("prompt removed", "prompt_removed", None, True, False, lambda: _list_diff("prompts", [prompt("p")], [])),
    (
        "resource added",
        "resource_added",
        None,
        False,
        False,
        lambda: _list_diff("resources", [], [{"uri": "r://a", "name": "a"}]),
    ),
    (
        "resource removed",
        "resource_removed",
        None,
        True,
        False,
        lambda: _list_diff("resources", [{"uri": "r://a", "name": "a"}], []),
    ),
    (
        "template added",
        "resource_template_added",
        None,
        False,
        False,
        lambda: _list_diff("resource-templates", [], [{"uriTemplate": "r://{id}", "name": "a"}]),
    ),
    (
        "template removed",
        "resource_template_removed",
        None,
        True,
        False,
        lambda: _list_diff("resource-templates", [{"uriTemplate": "r://{id}", "name": "a"}], []),
    ),
    # input schema
    (
        "required parameter added",
        "required_parameter_added",
        "inputSchema.required",
        True,
        True,
        lambda: schema_diff(obj({"title": STR}, ["title"]), obj({"title": STR, "author": STR}, ["title", "author"])),
    ),
    (
        "optional parameter added",
        "optional_parameter_added",
        "inputSchema.properties.language",
        False,
        True,
        lambda: schema_diff(obj({"title": STR}), obj({"title": STR, "language": {**STR, "default": "en"}})),
    ),
    (
        "parameter removed",
        "parameter_removed",
        "inputSchema.properties.language",
        True,
        True,
        lambda: schema_diff(obj({"title": STR, "language": STR}), obj({"title": STR})),
    ),
    (
        "parameter became required",
        "parameter_became_required",
        "inputSchema.required",
        True,
        True,
        lambda: schema_diff(obj({"a": STR, "b": STR}, ["a"]), obj({"a": STR, "b": STR}, ["a", "b"])),
    ),
    (
        "parameter became optional",
        "parameter_became_optional",
        "inputSchema.required",
        False,
        True,
        lambda: schema_diff(obj({"a": STR, "b": STR}, ["a", "b"]), obj({"a": STR, "b": STR}, ["a"])),
    ),
    (
        "type changed",
        "type_changed",
        "inputSchema.properties.a.type",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {"type": "object"}})),
    ),
    (
        "enum added",
        "type_narrowed",
        "inputSchema.properties.a.enum",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {**STR, "enum": ["x", "y"]}})),
    ),
    (
        "enum value removed",
        "type_narrowed",
        "inputSchema.properties.a.enum",
        True,
        True,
        lambda: schema_diff(obj({"a": {**STR, "enum": ["x", "y"]}}), obj({"a": {**STR, "enum": ["x"]}})),
    ),
    (
        "maximum lowered",
        "type_narrowed",
        "inputSchema.properties.n.maximum",
        True,
        True,
        lambda: schema_diff(obj({"n": {**INT, "maximum": 100}}), obj({"n": {**INT, "maximum": 10}})),
    ),
    (
        "minimum raised",
        "type_narrowed",
        "inputSchema.properties.n.minimum",
        True,
        True,
        lambda: schema_diff(obj({"n": {**INT, "minimum": 0}}), obj({"n": {**INT, "minimum": 1}})),
    ),
    (
        "maxLength tightened",
        "type_narrowed",
        "inputSchema.properties.a.maxLength",
        True,
        True,
        lambda: schema_diff(obj({"a": {**STR, "maxLength": 80}}), obj({"a": {**STR, "maxLength": 40}})),
    ),
    (
        "minLength tightened",
        "type_narrowed",
        "inputSchema.properties.a.minLength",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {**STR, "minLength": 3}})),
    ),
    (
        "pattern added",
        "type_narrowed",
        "inputSchema.properties.a.pattern",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {**STR, "pattern": "^[0-9-]+$"}})),
    ),
    (
        "pattern changed",
        "type_narrowed",
        "inputSchema.properties.a.pattern",
        True,
        True,
        lambda: schema_diff(obj({"a": {**STR, "pattern": "^a"}}), obj({"a": {**STR, "pattern": "^b"}})),
    ),
    (
        "format added",
        "type_narrowed",
        "inputSchema.properties.a.format",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {**STR, "format": "date"}})),
    ),
    (
        "additionalProperties false added",
        "type_narrowed",
        "inputSchema.additionalProperties",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": STR}, additionalProperties=False)),
    ),
    (
        "items narrowed",
        "type_narrowed",
        "inputSchema.properties.tags.items.maxLength",
        True,
        True,
        lambda: schema_diff(
            obj({"tags": {"type": "array", "items": STR}}),
            obj({"tags": {"type": "array", "items": {**STR, "maxLength": 5}}}),
        ),
    ),
    (
        "null no longer accepted",
        "type_narrowed",
        "inputSchema.properties.a.anyOf",
        True,
        True,
        lambda: schema_diff(obj({"a": NULLABLE_STR}), obj({"a": STR})),
    ),
    (
        "enum value added",
        "type_widened",
        "inputSchema.properties.a.enum",
        False,
        True,
        lambda: schema_diff(obj({"a": {**STR, "enum": ["x"]}}), obj({"a": {**STR, "enum": ["x", "y"]}})),
    ),
    (
        "integer to number",
        "type_widened",
        "inputSchema.properties.n.type",
        False,
        True,
        lambda: schema_diff(obj({"n": INT}), obj({"n": {"type": "number"}})),
    ),
    (
        "null accepted",
        "type_widened",
        "inputSchema.properties.a.anyOf",
        False,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": NULLABLE_STR})),
    ),
    (
        "default changed",
        "default_changed",
        "inputSchema.properties.lang.default",
        False,
        True,
        lambda: schema_diff(obj({"lang": {**STR, "default": "en"}}), obj({"lang": {**STR, "default": "de"}})),
    ),
    (
        "constraint without direction",
        "constraint_changed",
        "inputSchema.properties.a.not",
        True,
        True,
        lambda: schema_diff(obj({"a": STR}), obj({"a": {**STR, "not": {"const": ""}}})),
    ),
    (
        "examples changed",
        "schema_annotation_changed",
        "inputSchema.properties.a.examples",
        False,
        True,
        lambda: schema_diff(obj({"a": {**STR, "examples": ["x"]}}), obj({"a": {**STR, "examples": ["y"]}})),
    ),
    (
        "x-mcp-header on an object property",
        "x_mcp_header_invalid",
        "inputSchema",
        True,
        True,
        lambda: schema_diff(
            obj({"filter": {"type": "object"}}), obj({"filter": {"type": "object", "x-mcp-header": "Filter"}})
        ),
    ),
    (
        "x-mcp-header renamed",
        "x_mcp_header_changed",
        "inputSchema.properties.region.x-mcp-header",
        False,
        False,
        lambda: schema_diff(
            obj({"region": {**STR, "x-mcp-header": "Region"}}), obj({"region": {**STR, "x-mcp-header": "Zone"}})
        ),
    ),
    # output schema
    (
        "output property removed",
        "output_property_removed",
        "outputSchema.properties.year",
        True,
        False,
        lambda: output_diff(obj({"isbn": STR, "year": INT}), obj({"isbn": STR})),
    ),
    (
        "output property added",
        "output_property_added",
        "outputSchema.properties.year",
        False,
        False,
        lambda: output_diff(obj({"isbn": STR}, ["isbn"]), obj({"isbn": STR, "year": INT}, ["isbn", "year"])),
    ),
    (
        "output type changed",
        "output_type_changed",
        "outputSchema.properties.assignee.type",
        True,
        False,
        lambda: output_diff(obj({"assignee": STR}), obj({"assignee": {"type": "object"}})),
    ),
    (
        "output may be null",
        "output_type_changed",
        "outputSchema.properties.assignee.anyOf",
        True,
        False,
        lambda: output_diff(obj({"assignee": STR}), obj({"assignee": NULLABLE_STR})),
    ),
    (
        "output property left required",
        "output_property_no_longer_required",
        "outputSchema.required",
        True,
        False,
        lambda: output_diff(obj({"isbn": STR}, ["isbn"]), obj({"isbn": STR}, [])),
    ),
    (
        "output enum value added",
        "output_enum_value_added",
        "outputSchema.properties.state.enum",
        False,
        False,
        lambda: output_diff(
            obj({"state": {**STR, "enum": ["open"]}}), obj({"state": {**STR, "enum": ["open", "hold"]}})
        ),
    ),
    (
        "output became stricter",
        "output_type_narrowed",
        "outputSchema.properties.n.maximum",
        False,
        False,
        lambda: output_diff(obj({"n": INT}), obj({"n": {**INT, "maximum": 9}})),
    ),
    (
        "output bound relaxed",
        "output_type_widened",
        "outputSchema.properties.code.maxLength",
        False,
        False,
        lambda: output_diff(obj({"code": {**STR, "maxLength": 4}}), obj({"code": {**STR, "maxLength": 8}})),
    ),
    (
        "output schema removed",
        "output_schema_removed",
        "outputSchema",
        True,
        False,
        lambda: output_diff(obj({"isbn": STR}), None),
    ),
    (
        "output schema added",
        "output_schema_added",
        "outputSchema",
        False,
        False,
        lambda: output_diff(None, obj({"isbn": STR})),
    ),
    (
        "output description changed",
        "output_annotation_changed",
        "outputSchema.properties.isbn.description",
        False,
        False,
        lambda: output_diff(
            obj({"isbn": {**STR, "description": "ISBN-10"}}), obj({"isbn": {**STR, "description": "ISBN-13"}})
        ),
    ),
    # text the model reads
    (
        "tool description",
        "description_changed",
        "description",
        False,
        True,
        lambda: tools_diff(
            [tool("a", description="Convert units")], [tool("a", description="Convert units of length")]
        ),
    ),
    (
        "parameter description",
        "description_changed",
        "inputSchema.properties.q.description",
        False,
        True,
        lambda: schema_diff(obj({"q": {**STR, "description": "query"}}), obj({"q": {**STR, "description": "search"}})),
    ),
    (
        "prompt description",
        "description_changed",
        "description",
        False,
        True,
        lambda: _list_diff("prompts", [prompt("p", description="a")], [prompt("p", description="b")]),
    ),
    (
        "title changed",
        "title_changed",
        "title",
        False,
        True,
        lambda: tools_diff([tool("a", title="Find")], [tool("a", title="Find a book")]),
    ),
    (
        "instructions changed",
        "instructions_changed",
        "instructions",
        False,
        True,
        lambda: server_diff({"instructions": "Use find_book."}, {"instructions": "Prefer find_book_by_author."}),
    ),
    (
        "annotations changed",
        "annotations_changed",
        "annotations.destructiveHint",
        False,
        True,
        lambda: tools_diff(
            [tool("a", annotations={"readOnlyHint": False, "destructiveHint": False})],
            [tool("a", annotations={"readOnlyHint": False, "destructiveHint": True})],
        ),
    ),
    (
        "icons changed",
        "field_changed",
        "icons",
        False,
        False,
        lambda: tools_diff([tool("a")], [tool("a", icons=[{"src": "https://example.org/a.png"}])]),
    ),
    # resources
    (
        "resource uri changed",
        "uri_changed",
        "uri",
        True,
        False,
        lambda: _list_diff(
            "resources", [{"uri": "lib://catalog", "name": "catalog"}], [{"uri": "lib://v2/catalog", "name": "catalog"}]
        ),
    ),
    (
        "template changed",
        "uri_template_changed",
        "uriTemplate",
        True,
        False,
        lambda: _list_diff(
            "resource-templates",
            [{"uriTemplate": "lib://books/{isbn}", "name": "book"}],
            [{"uriTemplate": "lib://books/{id}", "name": "book"}],
        ),
    ),
    (
        "mime type changed",
        "mime_type_changed",
        "mimeType",
        True,
        False,
        lambda: _list_diff(
            "resources",
            [{"uri": "lib://c", "name": "c", "mimeType": "application/json"}],
            [{"uri": "lib://c", "name": "c", "mimeType": "text/csv"}],
        ),
    ),
    # prompts
    (
        "prompt required argument added",
        "prompt_required_argument_added",
        "arguments.genre",
        True,
        False,
        lambda: _list_diff("prompts", [prompt("p")], [prompt("p", {"name": "genre", "required": True})]),
    ),
    (
        "prompt optional argument added",
        "prompt_optional_argument_added",
        "arguments.genre",
        False,
        False,
        lambda: _list_diff("prompts", [prompt("p")], [prompt("p", {"name": "genre"})]),
    ),
    (
        "prompt argument removed",
        "prompt_argument_removed",
        "arguments.genre",
        True,
        False,
        lambda: _list_diff("prompts", [prompt("p", {"name": "genre"})], [prompt("p")]),
    ),
    (
        "prompt argument became required",
        "prompt_argument_became_required",
        "arguments.genre.required",
        True,
        False,
        lambda: _list_diff(
            "prompts", [prompt("p", {"name": "genre"})], [prompt("p", {"name": "genre", "required": True})]
        ),
    ),
    (
        "prompt argument became optional",
        "prompt_argument_became_optional",
        "arguments.genre.required",
        False,
        False,
        lambda: _list_diff(
            "prompts", [prompt("p", {"name": "genre", "required": True})], [prompt("p", {"name": "genre"})]
        ),
    ),
    # server
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
    # errors
    (
        "resource-not-found code changed",
        "error_code_changed",
        "unknown_resource.code",
        True,
        False,
        lambda: list(
            compare_errors(
                {"unknown_resource": {"mode": "jsonrpc_error", "code": -32002}},
                {"unknown_resource": {"mode": "jsonrpc_error", "code": -32602}},
            )
        ),
    ),
    (
        "unknown tool became a protocol error",
        "error_mode_changed",
        "unknown_tool.mode",
        True,
        False,
        lambda: list(
            compare_errors(
                {"unknown_tool": {"mode": "tool_error"}}, {"unknown_tool": {"mode": "jsonrpc_error", "code": -32602}}
            )
        ),
    ),
]


@pytest.mark.parametrize(
    ("rule_id", "path", "breaks", "models", "produce"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_rule_triggers_with_its_grade(
    rule_id: str, path: str | None, breaks: bool, models: bool, produce: Callable[[], Changes]
) -> None:
    changes = produce()
    matching = [c for c in changes if c["rule"] == rule_id]
    assert matching, f"{rule_id} not reported; got {[c['rule'] for c in changes]}"
    change = matching[0]
    assert change["path"] == path
    assert change["breaksClients"] is breaks
    assert change["affectsModels"] is models
    assert change["kind"] == RULES[rule_id].reported_kind
    assert set(change) >= {"list", "name", "path", "kind", "before", "after", "breaksClients", "affectsModels"}


def test_every_rule_has_a_case() -> None:
    assert {case[1] for case in CASES} == set(RULES)


def test_rules_have_ids_docs_and_families() -> None:
    for rule_id, rule in RULES.items():
        assert rule.id == rule_id and rule_id.islower() and " " not in rule_id
        assert rule.doc and "\n" not in rule.doc and rule.family


def test_required_parameter_added_reports_the_required_lists_once() -> None:
    changes = schema_diff(
        obj({"project": STR, "title": STR}, ["project", "title"]),
        obj({"project": STR, "title": STR, "priority": INT}, ["project", "title", "priority"]),
    )
    assert [(c["kind"], c["before"], c["after"]) for c in changes] == [
        ("required_parameter_added", ["project", "title"], ["project", "title", "priority"])
    ]


def test_removed_tool_gets_a_rename_hint_and_stays_breaking() -> None:
    schema = obj({"query": STR}, ["query"])
    changes = tools_diff([tool("search_issues", schema)], [tool("find_issues", schema)])
    removed = next(c for c in changes if c["kind"] == "removed")
    assert removed["breaksClients"] is True
    assert "find_issues" in removed["hint"]
    assert {c["kind"] for c in changes} == {"removed", "added"}


def test_unrelated_removed_tool_gets_no_hint() -> None:
    changes = tools_diff(
        [tool("delete_everything", obj({"force": {"type": "boolean"}}))], [tool("search", obj({"q": STR}))]
    )
    assert "hint" not in next(c for c in changes if c["kind"] == "removed")


def test_moved_resource_is_one_uri_change_not_remove_and_add() -> None:
    changes = _list_diff("resources", [{"uri": "lib://a", "name": "catalog"}], [{"uri": "lib://b", "name": "catalog"}])
    assert [c["rule"] for c in changes] == ["uri_changed"]


def test_skipped_error_probe_is_not_compared() -> None:
    changes = list(
        compare_errors(
            {"missing_required_argument": {"mode": "skipped"}}, {"missing_required_argument": {"mode": "tool_error"}}
        )
    )
    assert changes == []


def test_cross_era_server_comparison_skips_negotiated_fields() -> None:
    legacy = server_record("legacy", capabilities={"tools": {"listChanged": False}})
    modern = server_record("modern", capabilities={"tools": {"listChanged": True}})
    assert list(compare_server(legacy, modern, era_bound=False)) == []
    assert {c["rule"] for c in compare_server(legacy, modern, era_bound=True)} == {
        "protocol_version_removed",
        "protocol_version_added",
        "capability_added",
    }


def test_markdown_table_lists_every_rule_and_is_committed() -> None:
    from pathlib import Path

    table = markdown_table()
    for rule_id in RULES:
        assert f"| `{rule_id}` |" in table
    committed = Path(__file__).resolve().parents[2] / "watcher" / "contract" / "RULES.md"
    assert committed.read_text(encoding="utf-8") == table, "regenerate: python -m watcher.contract.rules --markdown"
