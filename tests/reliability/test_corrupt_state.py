"""Class 9: corrupt or unusable state is a clear error naming the file and the remedy, exit 2 —
and a zero-byte database is not silently a fresh start."""

from __future__ import annotations

from pathlib import Path

import pytest

from watcher.cli import main
from watcher.core.store import StateError, Store


def config_with_state(write_config, state: Path) -> Path:
    return write_config({"state": str(state), "teams": [{"name": "books", "slack_channel": "#books-mcp"}]})


def good_state(path: Path) -> None:
    store = Store(path)
    store.set_kv("digest:books", "2026-W49")
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        ("garbage", "is not a usable state database"),
        ("truncated", "is not a usable state database"),
        ("empty", "the state database is empty (0 bytes), not a fresh state"),
        ("directory", "is a directory, not the state database"),
    ],
)
def test_unusable_state_is_a_clear_error_with_exit_2(tmp_path: Path, write_config, capsys, damage, expected):
    state = tmp_path / "st" / "watcher.db"
    state.parent.mkdir()
    if damage == "garbage":
        state.write_bytes(b"this is not sqlite at all\n" * 200)
    elif damage == "truncated":
        good_state(state)
        state.write_bytes(state.read_bytes()[:1500])
    elif damage == "empty":
        state.write_bytes(b"")
    else:
        state.mkdir()
    config = config_with_state(write_config, state)
    assert main(["--config", str(config), "status"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mcp-watcher: {state}: ") and expected in err
    assert "Traceback" not in err
    if damage != "directory":
        assert "restore it from a backup, or move it aside" in err
    if damage == "empty":
        assert state.stat().st_size == 0, "the empty file is left for the operator, not overwritten"


def test_the_same_error_reaches_the_service(tmp_path: Path, write_config, capsys):
    state = tmp_path / "watcher.db"
    state.write_bytes(b"")
    config = config_with_state(write_config, state)
    assert main(["--config", str(config), "run", "--once"]) == 2
    assert "the state database is empty" in capsys.readouterr().err


def test_a_new_state_file_is_still_created(tmp_path: Path):
    store = Store(tmp_path / "new" / "watcher.db")
    assert store.schema_version >= 1
    with pytest.raises(StateError, match="is a directory"):
        Store(tmp_path / "new")
