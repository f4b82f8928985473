"""Shared pieces for the spec tests: fixtures on disk, a fake spec repo on the fake GitHub, config dicts."""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path
from typing import Any

import httpx

from tests.fakes.github_server import FakeGitHub
from watcher.config import LoadedConfig
from watcher.core.store import Store
from watcher.spec.watch import poll_spec

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO = "modelcontextprotocol/modelcontextprotocol"
REGISTRY_PATH = f"{REPO}/main/docs/specification/draft/deprecated.mdx"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def spec_releases(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    """The spec repo's releases as GitHub lists them (newest first), plus ``extra`` on top."""
    release = FakeGitHub.release
    return [
        *extra,
        release("2026-07-28", "2026-07-28T16:00:00Z"),
        release("2026-07-28-RC", "2026-05-29T15:00:00Z", prerelease=True),
        release("2025-11-25", "2025-11-25T18:00:00Z"),
        release("2025-06-18", "2025-06-18T17:00:00Z"),
        release("2025-03-26", "2025-03-26T17:00:00Z"),
        release("2024-11-05", "2024-11-05T17:00:00Z"),
        release("schema-tools-v0.3.1", "2026-02-02T10:00:00Z"),  # not a revision: ignored
    ]


def sep_header(number: int, title: str, status: str) -> str:
    """A SEP file's opening in the spec repo's format."""
    return (
        f"# SEP-{number}: {title}\n\n"
        f"- **Status**: {status}\n"
        "- **Type**: Process\n"
        "- **Created**: 2026-04-17\n"
        "- **Author(s)**: Example Author (@example)\n"
        "- **Sponsor**: @example\n"
        f"- **PR**: https://github.com/{REPO}/pull/{number}\n\n"
        "## Abstract\n\nText.\n"
    )


def add_sep_history(gh: FakeGitHub, number: int, slug: str, history: list[tuple[str, str]]) -> str:
    """Commits of seps/<number>-<slug>.md, oldest first: (status, ISO date-time). Returns the path."""
    path = f"seps/{number}-{slug}.md"
    for status, when in history:
        gh.add_commit(REPO, path, sep_header(number, slug.replace("-", " ").title(), status), when, f"{status}")
    return path


def serve_spec(
    gh: FakeGitHub, registry: str = "registry_today.mdx", releases: list[dict[str, Any]] | None = None
) -> None:
    gh.put_raw(REGISTRY_PATH, fixture(registry))
    gh.set_releases(REPO, releases if releases is not None else spec_releases())


def spec_config(
    gh: FakeGitHub,
    teams: list[dict[str, Any]] | None = None,
    operators_channel: str | None = None,
    sep_final: dict[int, str] | None = None,
) -> dict[str, Any]:
    """A config (for conftest's ``write_config``) pointing the spec side at the fake GitHub."""
    spec: dict[str, Any] = {"registry_url": gh.raw_url(REGISTRY_PATH), "repo": REPO, "github_api_url": gh.api_url}
    if sep_final is not None:
        spec["sep_final"] = sep_final
    return {
        "teams": teams
        if teams is not None
        else [
            {"name": "books", "slack_channel": "#books-mcp"},
            {"name": "infra", "slack_channel": "#infra-mcp"},
            {"name": "quiet", "slack_channel": "#quiet", "spec_news": False},
        ],
        "slack": {"operators_channel": operators_channel},
        "http_client": {"retries": 0, "backoff_seconds": 0, "timeout_seconds": 5},
        "spec": spec,
    }


def poll(loaded: LoadedConfig, store: Store, today: str = "2026-11-29") -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        async with httpx.AsyncClient() as client:
            return await poll_spec(loaded, store, client, today=date.fromisoformat(today))

    return asyncio.run(run())
