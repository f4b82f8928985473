"""Deprecation warnings an SDK printed while the server ran, read from the server's logs.

Python prints `path:line: MCPDeprecationWarning: message` (then the source line); Node prints
`(node:PID) [DEP0040] DeprecationWarning: message`. The same warning printed many times (per
request, per process) is reported once with a count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from watcher.core.run_report import DeprecationNotice

_PYTHON = re.compile(
    r"^(?P<where>\S.*?:\d+): "
    r"(?P<kind>(?:\w+\.)*(?:MCPDeprecationWarning|DeprecationWarning|PendingDeprecationWarning)): (?P<message>.+)$"
)
_NODE = re.compile(r"^\(node:\d+\) (?:\[(?P<code>[A-Z0-9_]+)\] )?(?P<kind>DeprecationWarning): (?P<message>.+)$")


def scan_lines(lines: Iterable[str], source: str = "") -> list[DeprecationNotice]:
    found: dict[tuple[str, str], DeprecationNotice] = {}
    for raw in lines:
        line = raw.rstrip()
        match = _PYTHON.match(line)
        runtime = "python"
        if not match:
            match = _NODE.match(line)
            runtime = "node"
        if not match:
            continue
        kind = match["kind"].rsplit(".", 1)[-1]
        message = match["message"].strip()
        key = (kind, message)
        if key in found:
            found[key]["count"] += 1
            continue
        entry: DeprecationNotice = {"kind": kind, "message": message, "runtime": runtime, "count": 1, "source": source}
        groups = match.groupdict()
        if groups.get("where"):
            entry["where"] = groups["where"]
        if groups.get("code"):
            entry["code"] = groups["code"]
        found[key] = entry
    return list(found.values())


def scan_files(paths: Iterable[Path]) -> list[DeprecationNotice]:
    """De-duplicated warnings over several logs (stdout and stderr of one or more server starts)."""
    merged: dict[tuple[str, str], DeprecationNotice] = {}
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for entry in scan_lines(text.splitlines(), source=path.name):
            key = (entry["kind"], entry["message"])
            if key in merged:
                merged[key]["count"] += entry["count"]
            else:
                merged[key] = entry
    return sorted(merged.values(), key=lambda e: (e["kind"], e["message"]))
