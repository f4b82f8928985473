"""Generated contract snapshots for the diff benchmarks: tools with nested schemas (a `$defs` reference,
unions, arrays of objects), and a candidate in which about 10 % of them changed the ways the rules classify.

Files are written with orjson (the generator is not what is measured); the layout is a real snapshot's.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import orjson


def _address(rng: random.Random) -> dict[str, Any]:
    return {
        "type": "object",
        "title": "Address",
        "properties": {
            "street": {"type": "string", "maxLength": rng.choice([80, 120])},
            "city": {"type": "string"},
            "country": {"type": "string", "enum": ["DE", "FR", "NL", "US"]},
            "geo": {
                "type": "object",
                "properties": {
                    "lat": {"type": "number", "minimum": -90, "maximum": 90},
                    "lon": {"type": "number", "minimum": -180, "maximum": 180},
                },
            },
        },
        "required": ["city", "country"],
    }


def make_tool(index: int, rng: random.Random) -> dict[str, Any]:
    name = f"tool_{index:04d}"
    input_schema = {
        "type": "object",
        "title": f"{name}Arguments",
        "properties": {
            "query": {"type": "string", "title": "Query", "description": f"What tool {index} searches for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
            "sort": {"anyOf": [{"type": "string", "enum": ["asc", "desc"]}, {"type": "null"}], "default": None},
            "ship_to": {"$ref": "#/$defs/Address"},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string", "pattern": "^[A-Z0-9-]+$"},
                        "qty": {"type": "integer", "minimum": 1},
                        "options": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
                    },
                    "required": ["sku", "qty"],
                },
            },
        },
        "required": ["query"],
        "$defs": {"Address": _address(rng)},
    }
    output_schema = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "status": {"type": "string", "enum": ["open", "closed"]},
            "total": {"type": "number"},
            "address": {"$ref": "#/$defs/Address"},
        },
        "required": ["id", "status"],
        "$defs": {"Address": _address(rng)},
    }
    return {
        "name": name,
        "title": f"Tool {index}",
        "description": f"Does thing number {index}.",
        "inputSchema": input_schema,
        "outputSchema": output_schema,
        "annotations": {"readOnlyHint": index % 2 == 0},
    }


def mutate(tools: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """About 10% of the tools change, in the ways the rules classify; a few are removed and added."""
    out = orjson.loads(orjson.dumps(tools))
    for tool in rng.sample(out, len(out) // 10):
        match rng.randrange(6):
            case 0:
                tool["inputSchema"]["properties"]["region"] = {"type": "string"}
                tool["inputSchema"]["required"].append("region")
            case 1:
                tool["description"] += " Now faster."
            case 2:
                tool["inputSchema"]["$defs"]["Address"]["properties"]["country"]["enum"].remove("NL")
            case 3:
                tool["outputSchema"]["properties"]["status"]["enum"].append("archived")
            case 4:
                del tool["outputSchema"]["properties"]["total"]
            case 5:
                tool["inputSchema"]["properties"]["items"]["items"]["properties"]["qty"]["maximum"] = 99
    del out[:5]
    first_new = max(10_000, len(tools))  # names no existing tool has
    out.extend(make_tool(first_new + i, rng) for i in range(5))
    return out


def write(directory: Path, tools: list[dict[str, Any]], eras: tuple[str, ...] | None = None) -> Path:
    targets = [directory / era for era in eras] if eras else [directory]
    ordered = orjson.dumps(sorted(tools, key=lambda t: t["name"]), option=orjson.OPT_INDENT_2)
    for target in targets:
        target.mkdir(parents=True)
        era = target.name if eras else "modern"
        (target / "tools.json").write_bytes(ordered)
        for name in ("resources.json", "resource-templates.json", "prompts.json"):
            (target / name).write_text("[]")
        (target / "server.json").write_text(json.dumps({"era": era, "status": "ok", "capabilities": {"tools": {}}}))
        (target / "errors.json").write_text("{}")
    return directory


def snapshot_pair(root: Path, tools: int, eras: tuple[str, ...] | None, seed: int = 4) -> tuple[Path, Path]:
    """(baseline, candidate) folders under `root`: `tools` generated tools, the candidate ~10 % changed."""
    rng = random.Random(seed)
    generated = [make_tool(i, rng) for i in range(tools)]
    changed = mutate(generated, rng)
    return write(root / "baseline", generated, eras), write(root / "candidate", changed, eras)


def folder_bytes(*folders: Path) -> int:
    """The bytes on disk of every file in the folders."""
    return sum(path.stat().st_size for folder in folders for path in folder.rglob("*") if path.is_file())
