"""Reports shaped as the suite runner writes them, around start-up output recorded from real servers run under
real `mcp` versions (tests/clusters/fixtures/recorded/, see its README)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

RECORDED = Path(__file__).resolve().parent / "fixtures" / "recorded"


def recorded(name: str) -> str:
    return (RECORDED / f"{name}.stderr.txt").read_text(encoding="utf-8")


def start_failure(server: str, stderr: str, version: str = "2.0.0a1", code: int = 1) -> dict[str, Any]:
    """A report of a server that exited while starting, its stderr as the runner keeps it."""
    error = f"the server exited with code {code} while starting"
    return {
        "server": server,
        "sdk": "python",
        "sdk_package": "mcp",
        "sdk_version": version,
        "baseline_sdk_version": "1.27.2",
        "verdict": "fail",
        "reasons": [{"verdict": "fail", "reason": f"the server did not start under mcp {version}: {error}"}],
        "install": {"ok": True},
        "start": {"ok": False, "error": error, "evidence": f"--- stderr (last lines) ---\n{stderr}"},
    }
