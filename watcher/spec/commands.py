"""``mcp-watcher deprecations [--json] [--today YYYY-MM-DD] [--offline]``.

Prints every registry row with its computed earliest removal and countdown. Fetches the registry and
the spec releases (conditional requests, cached in the state DB); when the registry cannot be fetched
or parsed, falls back to the last good copy in the state DB and says so on stderr. It never replaces
the poller's last good copy (so ``poll`` still notices the change).

Exit status: 0 every row resolved; 1 some row unresolved (listed on stderr); 2 the registry cannot be
read at all (no fetch and no last good copy), or the configuration is invalid.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import TYPE_CHECKING

from watcher.cli_support import Subparsers, config_and_state, config_error_exits_2, iso_date
from watcher.core.text import shown

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from watcher.config import WatcherConfig
    from watcher.core.store import Store
    from watcher.spec.removal import DeprecationRow
    from watcher.spec.watch import SpecFetch

COLUMNS = (
    ("feature", "Feature", 34),
    ("state", "State", 10),
    ("deprecated_in", "Deprecated in", 13),
    ("migration", "Migration", 34),
    ("earliest_removal", "Earliest removal", 18),
    ("days_left", "Days left", 9),
    ("basis", "Basis", 60),
)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "deprecations",
        help="registry rows with computed earliest removal and countdown",
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print a JSON list of objects")
    parser.add_argument("--today", type=iso_date, default=None, help="count days from this date (YYYY-MM-DD)")
    parser.add_argument("--offline", action="store_true", help="do not fetch; use the state DB's last good copy")
    parser.set_defaults(handler=run_deprecations)


@config_error_exits_2("deprecations")
def run_deprecations(args: argparse.Namespace) -> int:
    import asyncio

    from watcher.core.timefmt import today_utc
    from watcher.spec.watch import compute

    today = args.today or today_utc()
    with config_and_state(args) as (loaded, store):
        fetch = asyncio.run(_fetch(loaded.config, store, offline=args.offline))
        rows = compute(loaded.config, fetch, today)
    for note in _notes(fetch):
        print(f"note: {note}", file=sys.stderr)
    if fetch.registry is None:
        print(f"mcp-watcher deprecations: {fetch.registry_error}; no last good copy in the state DB", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        print(shown(render_table(rows), keep="\n"))  # the spec registry's text
    unresolved = [r for r in rows if not r["resolved"]]
    for row in unresolved:
        print(f"UNRESOLVED: {row['feature']}: {row['basis']}", file=sys.stderr)
    return 1 if unresolved else 0


async def _fetch(config: WatcherConfig, store: Store, offline: bool) -> SpecFetch:
    from watcher.spec.watch import fetch_spec, fetch_spec_online

    if offline:
        return await fetch_spec(config, store, None)
    return await fetch_spec_online(config, store)


def _notes(fetch: SpecFetch) -> list[str]:
    notes = []
    if fetch.registry_from_state:
        notes.append(
            f"{fetch.registry_error}; showing the last good copy from the state DB (saved {fetch.registry_saved_at})"
        )
    if fetch.releases_error and fetch.registry is not None:
        notes.append(f"{fetch.releases_error}; using the releases last seen ({len(fetch.revisions)})")
    notes.extend(fetch.sep_errors.values())
    return notes


def render_table(rows: Sequence[DeprecationRow]) -> str:
    """A plain-text table; long cells wrap inside their column."""
    widths = [min(limit, max([len(title)] + [len(_cell(r, key)) for r in rows])) for key, title, limit in COLUMNS]
    lines = [_line([title for _, title, _ in COLUMNS], widths), _line(["-" * w for w in widths], widths)]
    for row in rows:
        wrapped = [
            textwrap.wrap(_cell(row, key), width) or [""] for (key, _, _), width in zip(COLUMNS, widths, strict=True)
        ]
        for i in range(max(len(w) for w in wrapped)):
            lines.append(_line([w[i] if i < len(w) else "" for w in wrapped], widths))
    return "\n".join(lines)


def _cell(row: DeprecationRow, key: str) -> str:
    cells: Mapping[str, object] = row  # a column named by its key
    value = cells.get(key)
    if key == "earliest_removal":
        if value is None:
            return "UNRESOLVED"
        return f"{value}{' (proj.)' if row.get('earliest_removal_projected') else ''}"
    if key == "basis" and row.get("flags"):
        return f"{value} [{'; '.join(row['flags'])}]"
    return "" if value is None else str(value)


def _line(cells: list[str], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()
