"""Every kind of contract change, as a named rule with a stable id, a one-line doc and its grade.

One module per family: lists, renames, input_schema, output_schema, text, resources, prompts, server, errors,
fields, evolution. Each declares its rules in `RULES` and compares through one entry point,
`check(compared: Compared) -> Iterator[Change]`. `RULES` below is the table of all of them, by id;
`FAMILIES_BY_LIST` says which families look at an entry of each list, in the order they report.
`python -m watcher.contract.rules --markdown` prints the rules document (docs/contract-rules.md).
"""

from __future__ import annotations

from watcher.contract.rules import (
    errors,
    evolution,
    fields,
    input_schema,
    lists,
    output_schema,
    prompts,
    renames,
    resources,
    server,
    text,
)
from watcher.contract.rules.base import Change, Compared, Family, Rule, make_change

FAMILIES: tuple[Family, ...] = (
    lists,
    renames,
    input_schema,
    output_schema,
    text,
    resources,
    prompts,
    server,
    errors,
    fields,
    evolution,
)

FAMILIES_BY_LIST: dict[str, tuple[Family, ...]] = {
    "tools": (text, input_schema, output_schema, fields, evolution),
    "prompts": (text, prompts, fields),
    "resources": (resources, text, fields),
    "resource-templates": (resources, text, fields),
}
"""The families that compare one entry of each list (matched by its key), in reporting order.
Entries on one side only go to the `lists` family; server.json and errors.json to `server` and `errors`."""


def _table() -> dict[str, Rule]:
    table: dict[str, Rule] = {}
    for family in FAMILIES:
        for rule in family.RULES:
            if rule.id in table:
                raise RuntimeError(f"duplicate rule id {rule.id!r}")
            table[rule.id] = rule
    return table


RULES: dict[str, Rule] = _table()

__all__ = ["FAMILIES", "FAMILIES_BY_LIST", "RULES", "Change", "Compared", "Family", "Rule", "make_change"]
