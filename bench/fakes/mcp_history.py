"""The recorded PyPI page of `mcp`, shown to the fake registry as it looked at some point in its history."""

from __future__ import annotations

import json
from pathlib import Path

from packaging.utils import parse_sdist_filename, parse_wheel_filename
from packaging.version import Version

MCP_PAGE = Path("pypi/simple/mcp/index.json")
"""Where the page lives below the fake registry's root."""


def _file_version(filename: str) -> Version:
    if filename.endswith(".whl"):
        return parse_wheel_filename(filename)[1]
    return parse_sdist_filename(filename)[1]


class McpHistory:
    """Rewrites the page in place: `before("2.0.0rc1")` lists only what was uploaded before rc1;
    `whole()` restores the full recording. New versions "appear" by moving the cut forward."""

    def __init__(self, page: Path) -> None:
        self.page = page
        self.full = page.read_text()

    def before(self, version: str) -> None:
        data = json.loads(self.full)
        cut = Version(version)
        data["versions"] = [v for v in data["versions"] if Version(v) < cut]
        data["files"] = [f for f in data["files"] if _file_version(f["filename"]) < cut]
        self.page.write_text(json.dumps(data))

    def whole(self) -> None:
        self.page.write_text(self.full)
