"""Comparison of one tool across versions: composes the text, input_schema, output_schema and fields
families. Defines no rule of its own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from watcher.contract.rules import input_schema, output_schema
from watcher.contract.rules.fields import check_other_fields
from watcher.contract.rules.text import check_annotations, check_text

RULES = ()
_HANDLED = ("name", "title", "description", "annotations", "inputSchema", "outputSchema")


def compare_tool(before: dict[str, Any], after: dict[str, Any]) -> Iterator[dict[str, Any]]:
    name = after.get("name", before.get("name", "?"))
    yield from check_text("tools", name, before, after)
    yield from check_annotations("tools", name, before.get("annotations"), after.get("annotations"))
    yield from input_schema.check(name, before.get("inputSchema"), after.get("inputSchema"))
    yield from output_schema.check(name, before.get("outputSchema"), after.get("outputSchema"))
    yield from check_other_fields("tools", name, before, after, _HANDLED)


def check_added_tool(tool: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A new tool can already be invisible to HTTP clients."""
    yield from input_schema.check_x_mcp_header(tool.get("name", "?"), None, tool.get("inputSchema"))
