"""Benchmark: diff two generated 1,000-tool snapshots with nested schemas. Goal: < 1 s.

    .venv/bin/python bench/bench_diff.py [--tools 1000] [--runs 5]

Prints the best and median wall time of `diff_snapshots` (loading both folders included) for a
single-era pair and for a both-era pair (each era holds the same 1,000 tools).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from watcher.contract.diff import diff_snapshots  # noqa: E402


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
    out = json.loads(json.dumps(tools))
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
    out.extend(make_tool(10_000 + i, rng) for i in range(5))
    return out


def write(directory: Path, tools: list[dict[str, Any]], eras: tuple[str, ...] | None = None) -> Path:
    targets = [directory / era for era in eras] if eras else [directory]
    for target in targets:
        target.mkdir(parents=True)
        era = target.name if eras else "modern"
        (target / "tools.json").write_text(json.dumps(sorted(tools, key=lambda t: t["name"]), indent=2))
        for name in ("resources.json", "resource-templates.json", "prompts.json"):
            (target / name).write_text("[]")
        (target / "server.json").write_text(json.dumps({"era": era, "status": "ok", "capabilities": {"tools": {}}}))
        (target / "errors.json").write_text("{}")
    return directory


def measure(base: Path, cand: Path, runs: int) -> tuple[list[float], int]:
    times = []
    changes = 0
    for _ in range(runs):
        start = time.perf_counter()
        report = diff_snapshots(base, cand)
        times.append(time.perf_counter() - start)
        changes = len(report["changes"])
    return times, changes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(4)
    tools = [make_tool(i, rng) for i in range(args.tools)]
    changed = mutate(tools, rng)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        single = measure(write(root / "a", tools), write(root / "b", changed), args.runs)
        both = measure(
            write(root / "c", tools, ("legacy", "modern")), write(root / "d", changed, ("legacy", "modern")), args.runs
        )
    for label, (times, changes) in (("single-era", single), ("both-era", both)):
        print(
            f"diff {args.tools} vs {len(changed)} tools ({label}): best {min(times):.3f} s, "
            f"median {statistics.median(times):.3f} s, {changes} changes, goal < 1 s: "
            f"{'met' if min(times) < 1 else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
