"""`check` tells a user's mistake from the SDK failing: exit 2 with what to do, before anything is installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.fakes.registry_server import FakeRegistry, serve_registry
from tests.helpers import free_port
from tests.suites.helpers import library_server, write_config
from watcher.cli import main
from watcher.config import load_config
from watcher.core.store import Store
from watcher.suites.preflight import check_request


@pytest.fixture
def registry() -> Iterator[FakeRegistry]:
    with serve_registry() as fake:
        yield fake


def _config(tmp_path: Path, pypi_url: str, **server: object) -> Path:
    write_config(tmp_path, [library_server(**server)], tmp_path / "envs")
    path = tmp_path / "watcher.yaml"
    data = yaml.safe_load(path.read_text())
    data["sdks"][0]["url"] = pypi_url
    data["http_client"] = {"timeout_seconds": 2, "retries": 0}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _nothing_installed(tmp_path: Path) -> None:
    assert not (tmp_path / "envs").exists() and not (tmp_path / "runs").exists()


def test_a_version_the_registry_does_not_have_is_a_mistake(
    tmp_path: Path, registry: FakeRegistry, capsys: pytest.CaptureFixture[str]
):
    config = _config(tmp_path, registry.url("pypi/simple"))
    code = main(["--config", str(config), "check", "--server", "library", "--sdk-version", "9.9.9"])
    err = capsys.readouterr().err
    assert code == 2
    assert "pypi has no version 9.9.9 of mcp (newest: 2.3.0" in err
    assert "pass one it has to --sdk-version" in err
    assert "FAIL" not in err
    _nothing_installed(tmp_path)


def test_a_version_the_registry_has_passes_the_check_spelled_either_way(tmp_path: Path, registry: FakeRegistry):
    config = _config(tmp_path, registry.url("pypi/simple"))
    loaded = load_config(config)
    store = Store(loaded.resolve(loaded.config.state))
    try:
        assert check_request(loaded, store, "library", "2.3.0") == []
        assert check_request(loaded, store, "library", "2.3") == []  # PEP 440: the same version
    finally:
        store.close()


def test_a_registry_that_cannot_be_read_is_no_proof_the_check_goes_on_saying_so(tmp_path: Path):
    config = _config(tmp_path, f"http://127.0.0.1:{free_port()}/simple/")
    loaded = load_config(config)
    store = Store(loaded.resolve(loaded.config.state))
    try:
        [warning] = check_request(loaded, store, "library", "2.4.0b1")
    finally:
        store.close()
    assert (
        warning.startswith("could not confirm that mcp 2.4.0b1 exists (") and "trying to install it anyway" in warning
    )


def test_a_server_path_that_is_not_there_is_a_mistake(
    tmp_path: Path, registry: FakeRegistry, capsys: pytest.CaptureFixture[str]
):
    config = _config(tmp_path, registry.url("pypi/simple"), path="exmaples/library")  # a typo, relative
    code = main(["--config", str(config), "check", "--server", "library", "--sdk-version", "2.3.0"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"its path {tmp_path / 'exmaples' / 'library'} is not a folder" in err
    assert "correct `path:`" in err and "relative to that file's folder" in err
    _nothing_installed(tmp_path)


def test_an_unknown_server_is_a_mistake_naming_the_configured_ones(
    tmp_path: Path, registry: FakeRegistry, capsys: pytest.CaptureFixture[str]
):
    config = _config(tmp_path, registry.url("pypi/simple"))
    code = main(["--config", str(config), "check", "--server", "libary", "--sdk-version", "2.3.0"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no server named 'libary'; configured: ['library']" in err and "pass one of them to --server" in err
    _nothing_installed(tmp_path)
