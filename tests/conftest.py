"""Shared fixtures: a local Slack, a temporary state folder, and config files written on the fly."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.fakes.github_server import FakeGitHub
from tests.fakes.registry_server import FIXTURES, serve_registry
from tests.fakes.slack_server import FakeSlack
from tests.xdist_groups import pytest_collection_modifyitems  # noqa: F401  (an xdist_group holds: see there)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(token="xoxb-test-token", channels=["#books-mcp", "#ops", "#infra-mcp"]) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _no_real_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests decide for themselves whether Slack credentials exist.
    for name in (
        "SLACK_BOT_TOKEN",
        "SLACK_WEBHOOK_URL",
        "SLACK_APP_TOKEN",
        "SLACK_SIGNING_SECRET",
        "GITHUB_TOKEN",
        "MCP_WATCHER_CONFIG",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def write_config(tmp_path: Path):
    """write_config(dict) → path of a YAML config in tmp_path whose state lives in tmp_path too."""

    def write(data: dict, name: str = "watcher.yaml") -> Path:
        data = {"state": str(tmp_path / "state" / "watcher.db"), **data}
        (tmp_path / "state").mkdir(exist_ok=True)  # a configured state's folder must exist
        path = tmp_path / name
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    return write


@pytest.fixture(scope="session")
def sdk_envs(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """One `suites.envs_dir` for the whole session, every xdist worker's too, for the modules that only need
    an SDK environment built (not those that test building, caching or sealing one). Sharing it is safe and
    keeps no order between tests: an environment's folder is named by its server, SDK version and a hash of
    what it is built from (files, SDK, runtime), one builder at a time holds its file lock, and a run uses it
    only once its marker is written and its sealed digest still matches (`watcher/suites/build/env.py`)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base if worker_id == "master" else base.parent) / "sdk-envs"  # a worker's is <session>/<worker>
    folder.mkdir(exist_ok=True)
    return folder


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture
def world(tmp_path: Path) -> Iterator[dict]:
    """Everything the running service talks to, on loopback: registries (a copy of the recorded
    fixtures that a test may edit), the spec repo on a fake GitHub, and Slack."""
    import shutil

    from tests.fakes.mcp_history import MCP_PAGE
    from tests.spec.helpers import serve_spec

    root = tmp_path / "registry"
    shutil.copytree(FIXTURES, root)
    with (
        serve_registry(root) as registry,
        FakeGitHub() as gh,
        FakeSlack(token="xoxb-service-test", channels=["#books-mcp"]) as slack,
    ):
        serve_spec(gh)
        yield {"root": root, "registry": registry, "gh": gh, "slack": slack, "page": root / MCP_PAGE}
